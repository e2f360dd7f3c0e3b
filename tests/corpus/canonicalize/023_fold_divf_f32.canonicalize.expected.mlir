"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f32, f32, f32, f32), sym_name = "fold_divf"}> ({
    %0 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 0.666666686 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 0x7F800000 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = 0xFF800000 : f32}> : () -> f32
    %4 = "arith.constant"() <{value = 5.000000e-01 : f32}> : () -> f32
    %5 = "arith.constant"() <{value = 1.000000e+00 : f32}> : () -> f32
    "func.return"(%1, %2, %0, %3, %4, %0, %5) : (f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
