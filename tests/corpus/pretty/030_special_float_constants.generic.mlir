"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f64, f16, f64, f32), sym_name = "special"}> ({
    %0 = "arith.constant"() <{value = 0x7F800000 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 0xFF800000 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = 3.14159265358979 : f64}> : () -> f64
    %4 = "arith.constant"() <{value = 5.960460e-08 : f16}> : () -> f16
    %5 = "arith.constant"() <{value = 0x419D6F3454000000 : f64}> : () -> f64
    %6 = "arith.constant"() <{value = 1.000000e-10 : f32}> : () -> f32
    "func.return"(%0, %1, %2, %3, %4, %5, %6) : (f32, f32, f32, f64, f16, f64, f32) -> ()
  }) : () -> ()
}) : () -> ()
