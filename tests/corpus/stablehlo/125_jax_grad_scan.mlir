module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1:3 = stablehlo.while(%iterArg = %c, %iterArg_1 = %cst, %iterArg_2 = %0) : tensor<i64>, tensor<f32>, tensor<4xf32>
    cond {
      %c_3 = stablehlo.constant dense<4> : tensor<i64>
      %2 = stablehlo.compare LT, %iterArg, %c_3, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<4> : tensor<i64>
      %2 = stablehlo.subtract %c_3, %iterArg : tensor<i64>
      %c_4 = stablehlo.constant dense<1> : tensor<i64>
      %3 = stablehlo.subtract %2, %c_4 : tensor<i64>
      %4:2 = func.call @closed_call(%iterArg_1) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %5 = func.call @dynamic_update_index_in_dim(%iterArg_2, %4#1, %3) : (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
      %c_5 = stablehlo.constant dense<1> : tensor<i64>
      %6 = stablehlo.add %iterArg, %c_5 : tensor<i64>
      stablehlo.return %6, %4#0, %5 : tensor<i64>, tensor<f32>, tensor<4xf32>
    }
    return %1#2 : tensor<4xf32>
  }
  func.func private @closed_call(%arg0: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    return %arg0, %arg0 : tensor<f32>, tensor<f32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<4xf32>, %arg1: tensor<f32>, %arg2: tensor<i64>) -> tensor<4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<4xf32>, tensor<1xf32>, tensor<i64>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
