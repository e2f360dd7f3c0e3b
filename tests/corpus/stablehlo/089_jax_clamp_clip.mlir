module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.clamp %0, %arg0, %1 : tensor<4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %3 = call @clip(%arg0, %cst_1) : (tensor<4xf32>, tensor<f64>) -> tensor<4xf32>
    return %2, %3 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @clip(%arg0: tensor<4xf32>, %arg1: tensor<f64>) -> tensor<4xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<f64>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
