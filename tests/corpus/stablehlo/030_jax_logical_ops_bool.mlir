module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi1>, %arg1: tensor<4xi1>) -> (tensor<4xi1> {jax.result_info = "result"}) {
    %0 = stablehlo.and %arg0, %arg1 : tensor<4xi1>
    %1 = stablehlo.xor %arg0, %arg1 : tensor<4xi1>
    %2 = stablehlo.not %1 : tensor<4xi1>
    %3 = stablehlo.or %0, %2 : tensor<4xi1>
    return %3 : tensor<4xi1>
  }
}
