module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
    %1 = stablehlo.multiply %0, %cst : tensor<4xf32>
    %2 = stablehlo.compare GT, %1, %arg0, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %3 = stablehlo.select %2, %1, %arg0 : tensor<4xi1>, tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
