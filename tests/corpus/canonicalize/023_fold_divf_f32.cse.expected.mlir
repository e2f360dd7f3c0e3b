"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f32, f32, f32, f32, f32, f32), sym_name = "fold_divf"}> ({
    %0 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 2.250000e+00 : f32}> : () -> f32
    %2 = "arith.divf"(%0, %1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %3 = "arith.constant"() <{value = 1.000000e+00 : f32}> : () -> f32
    %4 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %5 = "arith.divf"(%3, %4) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %6 = "arith.divf"(%4, %4) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %7 = "arith.constant"() <{value = -1.000000e+00 : f32}> : () -> f32
    %8 = "arith.divf"(%7, %4) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %9 = "arith.constant"() <{value = 1.000000e-01 : f32}> : () -> f32
    %10 = "arith.constant"() <{value = 2.000000e-01 : f32}> : () -> f32
    %11 = "arith.divf"(%9, %10) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %12 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    %13 = "arith.divf"(%12, %3) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %14 = "arith.constant"() <{value = 3.000000e+38 : f32}> : () -> f32
    %15 = "arith.divf"(%14, %14) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "func.return"(%2, %5, %6, %8, %11, %13, %15) : (f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
