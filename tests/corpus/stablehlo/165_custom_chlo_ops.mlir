module {
  func.func @chlo(%arg0: tensor<4xf32>, %arg1: tensor<1xf32>) -> tensor<4xf32> {
    %0 = chlo.erf_inv %arg0 : tensor<4xf32> -> tensor<4xf32>
    %1 = chlo.broadcast_add %0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
