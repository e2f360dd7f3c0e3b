"builtin.module"() ({
  "func.func"() <{function_type = (index, index, index, f32) -> f32, sym_name = "loop"}> ({
  ^bb0(%arg0: index, %arg1: index, %arg2: index, %arg3: f32):
    %0 = "scf.for"(%arg0, %arg1, %arg2, %arg3) ({
    ^bb0(%arg4: index, %arg5: f32):
      %1 = "arith.cmpi"(%arg4, %arg1) <{predicate = 2 : i64}> : (index, index) -> i1
      %2 = "scf.if"(%1) ({
        %3 = "arith.addf"(%arg5, %arg5) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
        "scf.yield"(%3) : (f32) -> ()
      }, {
        "scf.yield"(%arg5) : (f32) -> ()
      }) : (i1) -> f32
      "scf.yield"(%2) : (f32) -> ()
    }) : (index, index, index, f32) -> f32
    "func.return"(%0) : (f32) -> ()
  }) : () -> ()
}) : () -> ()
