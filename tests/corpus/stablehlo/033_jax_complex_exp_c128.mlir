module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xcomplex<f64>>) -> (tensor<3xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = stablehlo.exponential %arg0 : tensor<3xcomplex<f64>>
    %1 = stablehlo.sqrt %arg0 : tensor<3xcomplex<f64>>
    %2 = stablehlo.divide %0, %1 : tensor<3xcomplex<f64>>
    return %2 : tensor<3xcomplex<f64>>
  }
}
