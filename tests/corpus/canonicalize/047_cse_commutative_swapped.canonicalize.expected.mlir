"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> (i32, i32, f32, f32), sym_name = "swapped"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %1 = "arith.addi"(%arg1, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %2 = "arith.sitofp"(%arg0) : (i32) -> f32
    %3 = "arith.sitofp"(%arg1) : (i32) -> f32
    %4 = "arith.mulf"(%2, %3) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %5 = "arith.mulf"(%3, %2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "func.return"(%0, %1, %4, %5) : (i32, i32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
