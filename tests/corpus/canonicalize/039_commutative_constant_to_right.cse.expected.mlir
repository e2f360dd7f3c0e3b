"builtin.module"() ({
  "func.func"() <{function_type = (i32, f32) -> (i32, i32, f32, i32), sym_name = "commute"}> ({
  ^bb0(%arg0: i32, %arg1: f32):
    %0 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 2.000000e+00 : f32}> : () -> f32
    %2 = "arith.addi"(%0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.muli"(%0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %4 = "arith.mulf"(%1, %arg1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %5 = "arith.andi"(%0, %arg0) : (i32, i32) -> i32
    "func.return"(%2, %3, %4, %5) : (i32, i32, f32, i32) -> ()
  }) : () -> ()
}) : () -> ()
