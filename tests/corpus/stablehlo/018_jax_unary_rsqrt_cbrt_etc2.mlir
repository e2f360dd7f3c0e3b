module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<4xf32> {jax.result_info = "result[4]"}, tensor<4xf32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.rsqrt %arg0 : tensor<4xf32>
    %1 = stablehlo.cbrt %arg0 : tensor<4xf32>
    %2 = stablehlo.sine %arg0 : tensor<4xf32>
    %3 = stablehlo.cosine %arg0 : tensor<4xf32>
    %4 = stablehlo.tan %arg0 : tensor<4xf32>
    %5 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
