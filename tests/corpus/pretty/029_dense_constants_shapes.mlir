module {
  func.func @dense() -> (tensor<2x2xi32>, tensor<f32>, tensor<0xf32>, vector<2xf64>, tensor<3xi8>) {
    %cst = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
    %cst_0 = arith.constant dense<5.000000e-01> : tensor<f32>
    %cst_1 = arith.constant dense<> : tensor<0xf32>
    %cst_2 = arith.constant dense<[1.000000e-01, 2.000000e-01]> : vector<2xf64>
    %cst_3 = arith.constant dense<-1> : tensor<3xi8>
    return %cst, %cst_0, %cst_1, %cst_2, %cst_3 : tensor<2x2xi32>, tensor<f32>, tensor<0xf32>, vector<2xf64>, tensor<3xi8>
  }
}
