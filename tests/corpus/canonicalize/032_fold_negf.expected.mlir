"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f64, f32, f32), sym_name = "negf"}> ({
    %0 = "arith.constant"() <{value = -1.500000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 0.000000e+00 : f64}> : () -> f64
    %2 = "arith.constant"() <{value = 0xFF800000 : f32}> : () -> f32
    %3 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    "func.return"(%0, %1, %2, %3) : (f32, f64, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
