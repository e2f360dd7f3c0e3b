module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f32>>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.real %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %1 = stablehlo.imag %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %2 = stablehlo.add %0, %1 : tensor<4xf32>
    %3 = stablehlo.real %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %4 = stablehlo.imag %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %5 = stablehlo.negate %4 : tensor<4xf32>
    %6 = stablehlo.complex %3, %5 : tensor<4xcomplex<f32>>
    %7 = stablehlo.multiply %6, %arg0 : tensor<4xcomplex<f32>>
    %8 = stablehlo.abs %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %9 = call @angle(%arg0) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    return %2, %7, %8, %9 : tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<4xf32>
  }
  func.func private @angle(%arg0: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
    %0 = stablehlo.real %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %1 = stablehlo.imag %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %2 = stablehlo.atan2 %1, %0 : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
