module {
  func.func @floats() -> (f32, f64, f16, bf16, f32, tensor<4xf32>, tensor<2xi32>, vector<3xi1>, f32) {
    %cst = arith.constant 1.500000e+00 : f32
    %cst_0 = arith.constant 1.000000e-01 : f64
    %cst_1 = arith.constant 0x7C00 : f16
    %cst_2 = arith.constant -0.000000e+00 : bf16
    %cst_3 = arith.constant 0x7FC00000 : f32
    %cst_4 = arith.constant dense<2.000000e+00> : tensor<4xf32>
    %cst_5 = arith.constant dense<[1, 2]> : tensor<2xi32>
    %cst_6 = arith.constant dense<[true, false, true]> : vector<3xi1>
    %cst_7 = arith.constant 1.500000e+00 : f32
    return %cst, %cst_0, %cst_1, %cst_2, %cst_3, %cst_4, %cst_5, %cst_6, %cst_7 : f32, f64, f16, bf16, f32, tensor<4xf32>, tensor<2xi32>, vector<3xi1>, f32
  }
}
