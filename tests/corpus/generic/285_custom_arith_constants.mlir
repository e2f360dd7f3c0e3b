"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i1, index, f32, f64, f16, bf16, tensor<2xi32>, vector<4xf32>, i8), sym_name = "constants"}> ({
    %0 = "arith.constant"() <{value = 42 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = true}> : () -> i1
    %2 = "arith.constant"() <{value = 7 : index}> : () -> index
    %3 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    %4 = "arith.constant"() <{value = 1.000000e-01 : f64}> : () -> f64
    %5 = "arith.constant"() <{value = 0x7C00 : f16}> : () -> f16
    %6 = "arith.constant"() <{value = -0.000000e+00 : bf16}> : () -> bf16
    %7 = "arith.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %8 = "arith.constant"() <{value = dense<5.000000e-01> : vector<4xf32>}> : () -> vector<4xf32>
    %9 = "arith.constant"() <{value = -1 : i8}> : () -> i8
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8, %9) : (i32, i1, index, f32, f64, f16, bf16, tensor<2xi32>, vector<4xf32>, i8) -> ()
  }) : () -> ()
}) : () -> ()
