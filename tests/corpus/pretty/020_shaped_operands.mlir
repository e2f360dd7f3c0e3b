module {
  func.func @shaped(%arg0: tensor<2x3xf32>, %arg1: vector<4xi32>, %arg2: tensor<?xi64>) -> (tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>, vector<4xf32>) {
    %0 = arith.addf %arg0, %arg0 : tensor<2x3xf32>
    %1 = arith.muli %arg1, %arg1 : vector<4xi32>
    %2 = arith.subi %arg2, %arg2 : tensor<?xi64>
    %3 = arith.sitofp %arg1 : vector<4xi32> to vector<4xf32>
    return %0, %1, %2, %3 : tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>, vector<4xf32>
  }
}
