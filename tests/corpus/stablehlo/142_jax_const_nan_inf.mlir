module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, -0.000000e+00]> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
