module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[1.500000e+00, 1.000000e-01, -2.000000e+00, 1.000000e+10]> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
