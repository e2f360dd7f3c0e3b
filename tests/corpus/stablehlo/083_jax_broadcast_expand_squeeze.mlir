module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<2x3x4xf32> {jax.result_info = "result[0]"}, tensor<1x3x4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
    %2 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<3x4xf32>) -> tensor<1x4xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x4xf32>) -> tensor<4xf32>
    return %0, %1, %3 : tensor<2x3x4xf32>, tensor<1x3x4xf32>, tensor<4xf32>
  }
}
