module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
    return %cst : tensor<f32>
  }
}
