"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "while"}> ({
  ^bb0(%arg0: i32):
    %0 = "scf.while"(%arg0) ({
    ^bb0(%arg2: i32):
      %3 = "arith.constant"() <{value = 0 : i32}> : () -> i32
      %4 = "arith.cmpi"(%arg2, %3) <{predicate = 4 : i64}> : (i32, i32) -> i1
      "scf.condition"(%4, %arg2) : (i1, i32) -> ()
    }, {
    ^bb0(%arg1: i32):
      %1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
      %2 = "arith.subi"(%arg1, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
      "scf.yield"(%2) : (i32) -> ()
    }) : (i32) -> i32
    "func.return"(%0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
