module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = call @_pad(%arg0) : (tensor<4xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @_pad(%arg0: tensor<4xf32>) -> tensor<8xf32> {
    %0 = stablehlo.slice %arg0 [1:3] : (tensor<4xf32>) -> tensor<2xf32>
    %1 = call @_flip(%0) : (tensor<2xf32>) -> tensor<2xf32>
    %2 = stablehlo.concatenate %1, %arg0, dim = 0 : (tensor<2xf32>, tensor<4xf32>) -> tensor<6xf32>
    %3 = stablehlo.slice %2 [3:5] : (tensor<6xf32>) -> tensor<2xf32>
    %4 = call @_flip(%3) : (tensor<2xf32>) -> tensor<2xf32>
    %5 = stablehlo.concatenate %2, %4, dim = 0 : (tensor<6xf32>, tensor<2xf32>) -> tensor<8xf32>
    return %5 : tensor<8xf32>
  }
  func.func private @_flip(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
