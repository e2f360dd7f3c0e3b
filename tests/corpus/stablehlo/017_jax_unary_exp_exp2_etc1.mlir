module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<4xf32> {jax.result_info = "result[4]"}, tensor<4xf32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.exponential %arg0 : tensor<4xf32>
    %cst = stablehlo.constant dense<0.693147182> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.multiply %1, %arg0 : tensor<4xf32>
    %3 = stablehlo.exponential %2 : tensor<4xf32>
    %4 = stablehlo.exponential_minus_one %arg0 : tensor<4xf32>
    %5 = stablehlo.log %arg0 : tensor<4xf32>
    %6 = stablehlo.log_plus_one %arg0 : tensor<4xf32>
    %7 = stablehlo.sqrt %arg0 : tensor<4xf32>
    return %0, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
