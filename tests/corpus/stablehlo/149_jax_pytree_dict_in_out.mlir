module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result['nested'][0]"}, tensor<4xf32> {jax.result_info = "result['nested'][1][0]"}, tensor<4xf32> {jax.result_info = "result['sum']"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.multiply %arg1, %1 : tensor<4xf32>
    return %arg0, %2, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
