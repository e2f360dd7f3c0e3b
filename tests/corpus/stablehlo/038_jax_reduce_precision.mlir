module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
