module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xi1> {jax.result_info = "result[2]"}, tensor<4xi1> {jax.result_info = "result[3]"}, tensor<4xf32> {jax.result_info = "result[4]"}, tensor<4xf32> {jax.result_info = "result[5]"}) {
    %0 = chlo.lgamma %arg0 : tensor<4xf32> -> tensor<4xf32>
    %1 = chlo.digamma %arg0 : tensor<4xf32> -> tensor<4xf32>
    %2 = stablehlo.is_finite %arg0 : (tensor<4xf32>) -> tensor<4xi1>
    %3 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %4 = chlo.square %arg0 : tensor<4xf32> -> tensor<4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %6 = stablehlo.divide %5, %arg0 : tensor<4xf32>
    return %0, %1, %2, %3, %4, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
  }
}
