module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
    %cst_0 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %1 = call @_where(%0, %cst, %cst_0) : (tensor<4xi1>, tensor<f64>, tensor<f64>) -> tensor<4xf64>
    return %1 : tensor<4xf64>
  }
  func.func private @_where(%arg0: tensor<4xi1>, %arg1: tensor<f64>, %arg2: tensor<f64>) -> tensor<4xf64> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %2 = stablehlo.select %arg0, %0, %1 : tensor<4xi1>, tensor<4xf64>
    return %2 : tensor<4xf64>
  }
}
