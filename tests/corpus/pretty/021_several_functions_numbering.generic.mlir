"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "a"}> ({
  ^bb0(%arg2: i32):
    %4 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %5 = "arith.addi"(%arg2, %4) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "func.return"(%5) : (i32) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (i32, i32) -> i32, sym_name = "b"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %1 = "arith.muli"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %2 = "arith.muli"(%1, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "func.call"(%2) <{callee = @a}> : (i32) -> i32
    "func.return"(%3) : (i32) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> f32, sym_name = "c"}> ({
    %0 = "arith.constant"() <{value = 2.500000e+00 : f32}> : () -> f32
    "func.return"(%0) : (f32) -> ()
  }) : () -> ()
}) : () -> ()
