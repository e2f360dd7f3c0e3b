"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32, f32) -> (), sym_name = "unused"}> ({
  ^bb0(%arg0: i32, %arg1: i32, %arg2: f32):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %1 = "arith.mulf"(%arg2, %arg2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %2 = "arith.constant"() <{value = 3.000000e+00 : f32}> : () -> f32
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
