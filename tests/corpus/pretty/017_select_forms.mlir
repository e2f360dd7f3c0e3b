module {
  func.func @select(%arg0: i1, %arg1: i32, %arg2: i32, %arg3: vector<4xi1>, %arg4: vector<4xf32>, %arg5: tensor<2xf32>) -> (i32, vector<4xf32>, tensor<2xf32>) {
    %0 = arith.select %arg0, %arg1, %arg2 : i32
    %1 = arith.select %arg3, %arg4, %arg4 : vector<4xi1>, vector<4xf32>
    %2 = arith.select %arg0, %arg5, %arg5 : tensor<2xf32>
    return %0, %1, %2 : i32, vector<4xf32>, tensor<2xf32>
  }
}
