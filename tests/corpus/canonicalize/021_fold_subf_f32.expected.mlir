"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f32, f32, f32, f32), sym_name = "fold_subf"}> ({
    %0 = "arith.constant"() <{value = -1.000000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 1.000000e+00 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = -7.500000e-01 : f32}> : () -> f32
    %4 = "arith.constant"() <{value = -1.000000e-01 : f32}> : () -> f32
    %5 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    "func.return"(%3, %2, %1, %0, %4, %5, %1) : (f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
