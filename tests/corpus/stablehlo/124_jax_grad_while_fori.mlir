module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1:3 = stablehlo.while(%iterArg = %c, %iterArg_2 = %arg0, %iterArg_3 = %0) : tensor<i64>, tensor<f32>, tensor<3xf32>
    cond {
      %c_4 = stablehlo.constant dense<3> : tensor<i64>
      %3 = stablehlo.compare LT, %iterArg, %c_4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3:2 = func.call @closed_call(%iterArg_2) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %4 = func.call @dynamic_update_index_in_dim(%iterArg_3, %3#1, %iterArg) : (tensor<3xf32>, tensor<f32>, tensor<i64>) -> tensor<3xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i64>
      %5 = stablehlo.add %iterArg, %c_4 : tensor<i64>
      stablehlo.return %5, %3#0, %4 : tensor<i64>, tensor<f32>, tensor<3xf32>
    }
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %2:3 = stablehlo.while(%iterArg = %1#2, %iterArg_2 = %c_1, %iterArg_3 = %cst_0) : tensor<3xf32>, tensor<i64>, tensor<f32>
    cond {
      %c_4 = stablehlo.constant dense<3> : tensor<i64>
      %3 = stablehlo.compare LT, %iterArg_2, %c_4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %c_4 = stablehlo.constant dense<3> : tensor<i64>
      %3 = stablehlo.subtract %c_4, %iterArg_2 : tensor<i64>
      %c_5 = stablehlo.constant dense<1> : tensor<i64>
      %4 = stablehlo.subtract %3, %c_5 : tensor<i64>
      %5 = func.call @dynamic_index_in_dim(%iterArg, %4) : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
      %6 = func.call @closed_call_0(%iterArg_3, %5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %c_6 = stablehlo.constant dense<1> : tensor<i64>
      %7 = stablehlo.add %iterArg_2, %c_6 : tensor<i64>
      stablehlo.return %iterArg, %7, %6 : tensor<3xf32>, tensor<i64>, tensor<f32>
    }
    return %2#2 : tensor<f32>
  }
  func.func private @closed_call(%arg0: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<f32>
    return %0, %arg0 : tensor<f32>, tensor<f32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<3xf32>, %arg1: tensor<f32>, %arg2: tensor<i64>) -> tensor<3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<3xf32>, tensor<1xf32>, tensor<i64>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<3xf32>, %arg1: tensor<i64>) -> tensor<f32> {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [1] : (tensor<3xf32>, tensor<i64>) -> tensor<1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @closed_call_0(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.multiply %arg1, %arg0 : tensor<f32>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<f32>
    %2 = stablehlo.add %0, %1 : tensor<f32>
    return %2 : tensor<f32>
  }
}
