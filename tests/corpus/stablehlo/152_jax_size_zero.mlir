module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<0xf32>, %arg1: tensor<3x0xf32>) -> (tensor<0xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<0xf32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<0xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%arg1 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
    return %1, %2, %3 : tensor<0xf32>, tensor<3xf32>, tensor<0xf32>
  }
}
