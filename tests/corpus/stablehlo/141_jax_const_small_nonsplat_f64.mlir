module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf64>) -> (tensor<4xf64> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[1.000000e-01, 0.33333333333333331, 3.14159265358979, 1.000000e-300]> : tensor<4xf64>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf64>
    return %0 : tensor<4xf64>
  }
}
