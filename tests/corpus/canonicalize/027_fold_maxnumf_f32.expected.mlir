"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f32, f32, f32, f32), sym_name = "fold_maxnumf"}> ({
    %0 = "arith.constant"() <{value = 3.000000e+38 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 2.250000e+00 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = 1.000000e+00 : f32}> : () -> f32
    %4 = "arith.constant"() <{value = 2.000000e-01 : f32}> : () -> f32
    "func.return"(%2, %3, %1, %1, %4, %3, %0) : (f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
