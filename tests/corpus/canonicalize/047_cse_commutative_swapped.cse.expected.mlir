"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> (i32, i32, f32, f32), sym_name = "swapped"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %1 = "arith.sitofp"(%arg0) : (i32) -> f32
    %2 = "arith.sitofp"(%arg1) : (i32) -> f32
    %3 = "arith.mulf"(%1, %2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "func.return"(%0, %0, %3, %3) : (i32, i32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
