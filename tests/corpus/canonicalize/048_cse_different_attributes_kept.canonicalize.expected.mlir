"builtin.module"() ({
  "func.func"() <{function_type = (f32, f32, i32, i32) -> (f32, f32, i32, i32, i1, i1), sym_name = "attrs"}> ({
  ^bb0(%arg0: f32, %arg1: f32, %arg2: i32, %arg3: i32):
    %0 = "arith.addf"(%arg0, %arg1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %1 = "arith.addf"(%arg0, %arg1) <{fastmath = #arith.fastmath<fast>}> : (f32, f32) -> f32
    %2 = "arith.addi"(%arg2, %arg3) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.addi"(%arg2, %arg3) <{overflowFlags = #arith.overflow<nsw>}> : (i32, i32) -> i32
    %4 = "arith.cmpi"(%arg2, %arg3) <{predicate = 2 : i64}> : (i32, i32) -> i1
    %5 = "arith.cmpi"(%arg2, %arg3) <{predicate = 3 : i64}> : (i32, i32) -> i1
    "func.return"(%0, %1, %2, %3, %4, %5) : (f32, f32, i32, i32, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
