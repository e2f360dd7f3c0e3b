module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xi32> {jax.result_info = "result[0]"}, tensor<4xf16> {jax.result_info = "result[1]"}, tensor<4xi1> {jax.result_info = "result[2]"}, tensor<4xui8> {jax.result_info = "result[3]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>
    %1 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xf16>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.compare NE, %arg0, %2, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %4 = stablehlo.convert %3 : tensor<4xi1>
    %5 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xui8>
    %6 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
    return %0, %1, %4, %5, %6 : tensor<4xi32>, tensor<4xf16>, tensor<4xi1>, tensor<4xui8>, tensor<4xcomplex<f32>>
  }
}
