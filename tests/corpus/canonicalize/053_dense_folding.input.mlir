func.func @dense() -> (tensor<4xi32>, vector<2xf32>, tensor<4xi1>, tensor<3xf64>) {
  %a = arith.constant dense<3> : tensor<4xi32>
  %b = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %c = arith.constant dense<1.5> : vector<2xf32>
  %d = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  %0 = arith.addi %a, %b : tensor<4xi32>
  %1 = arith.mulf %c, %c : vector<2xf32>
  %2 = arith.cmpi slt, %a, %b : tensor<4xi32>
  %3 = arith.addf %d, %d : tensor<3xf64>
  return %0, %1, %2, %3 : tensor<4xi32>, vector<2xf32>, tensor<4xi1>, tensor<3xf64>
}
