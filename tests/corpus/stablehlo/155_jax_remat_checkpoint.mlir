module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %1:2 = stablehlo.optimization_barrier %arg0, %0 : tensor<4xf32>, tensor<4xf32>
    %2 = stablehlo.sine %1#0 : tensor<4xf32>
    %3 = stablehlo.cosine %1#0 : tensor<4xf32>
    %4 = stablehlo.cosine %2 : tensor<4xf32>
    %5 = stablehlo.multiply %1#1, %4 : tensor<4xf32>
    %6 = stablehlo.multiply %5, %3 : tensor<4xf32>
    return %6 : tensor<4xf32>
  }
}
