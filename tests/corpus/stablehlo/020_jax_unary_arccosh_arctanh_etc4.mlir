module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<4xf32> {jax.result_info = "result[4]"}, tensor<4xf32> {jax.result_info = "result[5]"}) {
    %0 = call @arccosh(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = chlo.atanh %arg0 : tensor<4xf32> -> tensor<4xf32>
    %2 = stablehlo.negate %arg0 : tensor<4xf32>
    %3 = stablehlo.exponential %2 : tensor<4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.add %4, %3 : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %7 = stablehlo.divide %6, %5 : tensor<4xf32>
    %8 = chlo.erf %arg0 : tensor<4xf32> -> tensor<4xf32>
    %9 = chlo.erfc %arg0 : tensor<4xf32> -> tensor<4xf32>
    %10 = chlo.erf_inv %arg0 : tensor<4xf32> -> tensor<4xf32>
    return %0, %1, %7, %8, %9, %10 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  func.func private @arccosh(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = chlo.acosh %arg0 : tensor<4xf32> -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
