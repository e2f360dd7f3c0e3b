"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f32, f32, f32, f32), sym_name = "fold_addf"}> ({
    %0 = "arith.constant"() <{value = 3.750000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 1.000000e+00 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = -1.000000e+00 : f32}> : () -> f32
    %4 = "arith.constant"() <{value = 3.000000e-01 : f32}> : () -> f32
    %5 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    %6 = "arith.constant"() <{value = 0x7F800000 : f32}> : () -> f32
    "func.return"(%0, %1, %2, %3, %4, %5, %6) : (f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
