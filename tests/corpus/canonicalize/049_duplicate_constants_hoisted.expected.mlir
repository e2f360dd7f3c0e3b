"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i32, i32, f32, f32), sym_name = "constants"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 7 : i32}> : () -> i32
    %2 = "arith.addi"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.muli"(%2, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %4 = "arith.subi"(%3, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "func.return"(%2, %3, %4, %0, %0) : (i32, i32, i32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
