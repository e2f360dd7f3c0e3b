module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<3x2x4xf32> {jax.result_info = "result[0]"}, tensor<3x2xf32> {jax.result_info = "result[1]"}, tensor<3x2xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 1 : (tensor<3x1x4xf32>, tensor<3x1x4xf32>) -> tensor<3x2x4xf32>
    %3 = stablehlo.slice %arg0 [0:3, 0:2] : (tensor<3x4xf32>) -> tensor<3x2xf32>
    %4 = stablehlo.slice %arg0 [0:3, 2:4] : (tensor<3x4xf32>) -> tensor<3x2xf32>
    return %2, %3, %4 : tensor<3x2x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>
  }
}
