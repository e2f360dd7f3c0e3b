module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<2x4xf32> {jax.result_info = "result[0]"}, tensor<2x3xf32> {jax.result_info = "result[1]"}, tensor<3x1xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.slice %arg0 [1:3, 0:4] : (tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.slice %arg0 [0:3:2, 1:4] : (tensor<3x4xf32>) -> tensor<2x3xf32>
    %2 = stablehlo.slice %arg0 [0:3, 0:1] : (tensor<3x4xf32>) -> tensor<3x1xf32>
    %3 = stablehlo.reshape %2 : (tensor<3x1xf32>) -> tensor<3xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    return %0, %1, %4 : tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x1xf32>
  }
}
