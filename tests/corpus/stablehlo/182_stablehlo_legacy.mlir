module {
  func.func @main(%arg0: tensor<3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<2xi32>) {
    %0 = stablehlo.einsum %arg0, %arg1, config = "ab,bc->ac" : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %1 = stablehlo.unary_einsum %arg0, config = "ab->a" : (tensor<3x4xf32>) -> tensor<3xf32>
    %2 = "stablehlo.torch_index_select"(%arg0, %arg2) <{batch_dims = 0 : i64, dim = 0 : i64}> : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
    return
  }
}
