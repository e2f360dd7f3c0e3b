module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<4xf32> {jax.result_info = "result[4]"}, tensor<4xf32> {jax.result_info = "result[5]"}) {
    %0 = chlo.asin %arg0 : tensor<4xf32> -> tensor<4xf32>
    %1 = chlo.acos %arg0 : tensor<4xf32> -> tensor<4xf32>
    %2 = chlo.atan %arg0 : tensor<4xf32> -> tensor<4xf32>
    %3 = chlo.sinh %arg0 : tensor<4xf32> -> tensor<4xf32>
    %4 = chlo.cosh %arg0 : tensor<4xf32> -> tensor<4xf32>
    %5 = chlo.asinh %arg0 : tensor<4xf32> -> tensor<4xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
