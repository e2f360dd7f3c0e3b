"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, f32, i1), sym_name = "folded"}> ({
    %0 = "arith.constant"() <{value = 12 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 1.200000e+01 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = true}> : () -> i1
    "func.return"(%0, %1, %2) : (i32, f32, i1) -> ()
  }) : () -> ()
}) : () -> ()
