module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[(1.000000e+00,2.000000e+00), (-0.000000e+00,-5.000000e-01), (3.000000e+00,0.000000e+00), (0.000000e+00,0.000000e+00)]> : tensor<4xcomplex<f32>>
    %0 = stablehlo.multiply %arg0, %cst : tensor<4xcomplex<f32>>
    return %0 : tensor<4xcomplex<f32>>
  }
}
