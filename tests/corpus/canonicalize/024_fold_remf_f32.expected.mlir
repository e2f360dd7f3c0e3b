"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f32, f32, f32, f32), sym_name = "fold_remf"}> ({
    %0 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 1.000000e-01 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    "func.return"(%0, %1, %1, %1, %2, %1, %3) : (f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
