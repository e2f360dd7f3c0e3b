"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f64, i32, i32, f32, f16, i32, f32, f64, i8), sym_name = "float_casts"}> ({
    %0 = "arith.constant"() <{value = 2.750000e+00 : f64}> : () -> f64
    %1 = "arith.constant"() <{value = 2.750000e+00 : f32}> : () -> f32
    %2 = "arith.constant"() <{value = 1076887552 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = 1.000000e-01 : f64}> : () -> f64
    %4 = "arith.constant"() <{value = -2.500000e+00 : f32}> : () -> f32
    %5 = "arith.constant"() <{value = -7.000000e+00 : f32}> : () -> f32
    %6 = "arith.constant"() <{value = 0x41EFFFFFFF200000 : f64}> : () -> f64
    %7 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %8 = "arith.truncf"(%3) : (f64) -> f32
    %9 = "arith.truncf"(%3) : (f64) -> f16
    %10 = "arith.fptoui"(%4) : (f32) -> i8
    "func.return"(%5, %6, %7, %7, %8, %9, %2, %1, %0, %10) : (f32, f64, i32, i32, f32, f16, i32, f32, f64, i8) -> ()
  }) : () -> ()
}) : () -> ()
