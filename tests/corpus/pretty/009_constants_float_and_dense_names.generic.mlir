"builtin.module"() ({
  "func.func"() <{function_type = () -> (f32, f64, f16, bf16, f32, tensor<4xf32>, tensor<2xi32>, vector<3xi1>, f32), sym_name = "floats"}> ({
    %0 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    %1 = "arith.constant"() <{value = 1.000000e-01 : f64}> : () -> f64
    %2 = "arith.constant"() <{value = 0x7C00 : f16}> : () -> f16
    %3 = "arith.constant"() <{value = -0.000000e+00 : bf16}> : () -> bf16
    %4 = "arith.constant"() <{value = 0x7FC00000 : f32}> : () -> f32
    %5 = "arith.constant"() <{value = dense<2.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
    %6 = "arith.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %7 = "arith.constant"() <{value = dense<[true, false, true]> : vector<3xi1>}> : () -> vector<3xi1>
    %8 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8) : (f32, f64, f16, bf16, f32, tensor<4xf32>, tensor<2xi32>, vector<3xi1>, f32) -> ()
  }) : () -> ()
}) : () -> ()
