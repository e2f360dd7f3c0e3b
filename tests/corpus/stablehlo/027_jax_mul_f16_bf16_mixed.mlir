module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf16>, %arg1: tensor<4xbf16>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4xf16>) -> tensor<4xf32>
    %1 = stablehlo.convert %arg1 : (tensor<4xbf16>) -> tensor<4xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
