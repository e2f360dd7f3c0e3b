module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f64>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<(1.000000e+00,-1.000000e+00)> : tensor<complex<f64>>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %1 = stablehlo.add %arg0, %0 : tensor<4xcomplex<f64>>
    return %1 : tensor<4xcomplex<f64>>
  }
}
