module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.multiply %2, %1 : tensor<4xf32>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %c_1 = stablehlo.constant dense<1> : tensor<i64>
    %4 = call @clip(%3, %c, %c_1) : (tensor<4xf32>, tensor<i64>, tensor<i64>) -> tensor<4xf32>
    return %4 : tensor<4xf32>
  }
  func.func private @clip(%arg0: tensor<4xf32>, %arg1: tensor<i64>, %arg2: tensor<i64>) -> tensor<4xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i64>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<4xf32>
    %3 = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<4xf32>
    return %5 : tensor<4xf32>
  }
}
