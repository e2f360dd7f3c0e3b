module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<2x6xf32> {jax.result_info = "result[0]"}, tensor<4x3xf32> {jax.result_info = "result[1]"}, tensor<2x3x2xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<2x6xf32>
    %1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
    %2 = stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<3x2x2xf32>
    %3 = stablehlo.transpose %2, dims = [2, 0, 1] : (tensor<3x2x2xf32>) -> tensor<2x3x2xf32>
    return %0, %1, %3 : tensor<2x6xf32>, tensor<4x3xf32>, tensor<2x3x2xf32>
  }
}
