module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result[0]"}, tensor<3x4xf32> {jax.result_info = "result[1]"}, tensor<6x4xf32> {jax.result_info = "result[2]"}, tensor<6x4xf32> {jax.result_info = "result[3]"}) {
    %0 = call @_flip(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %1 = call @_roll_static(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %2 = stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<1x3x1x4xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2, 3] : (tensor<1x3x1x4xf32>) -> tensor<2x3x1x4xf32>
    %4 = stablehlo.reshape %3 : (tensor<2x3x1x4xf32>) -> tensor<6x4xf32>
    %5 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<3x4xf32>) -> tensor<3x2x4xf32>
    %6 = stablehlo.reshape %5 : (tensor<3x2x4xf32>) -> tensor<6x4xf32>
    return %0, %1, %4, %6 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
  }
  func.func private @_flip(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
  func.func private @_roll_static(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.slice %arg0 [0:3, 3:4] : (tensor<3x4xf32>) -> tensor<3x1xf32>
    %1 = stablehlo.slice %arg0 [0:3, 0:3] : (tensor<3x4xf32>) -> tensor<3x3xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 1 : (tensor<3x1xf32>, tensor<3x3xf32>) -> tensor<3x4xf32>
    return %2 : tensor<3x4xf32>
  }
}
