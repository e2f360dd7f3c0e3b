module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> (tensor<4xi32> {jax.result_info = "result[0]"}, tensor<4xi32> {jax.result_info = "result[1]"}, tensor<4xi32> {jax.result_info = "result[2]"}, tensor<4xi32> {jax.result_info = "result[3]"}, tensor<4xi32> {jax.result_info = "result[4]"}) {
    %0 = call @floor_divide(%arg0, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %1 = stablehlo.shift_left %arg0, %arg1 : tensor<4xi32>
    %2 = stablehlo.shift_right_arithmetic %arg0, %arg1 : tensor<4xi32>
    %3 = stablehlo.shift_right_logical %arg0, %arg1 : tensor<4xi32>
    %4 = stablehlo.and %arg0, %arg1 : tensor<4xi32>
    return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
  }
  func.func private @floor_divide(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> tensor<4xi32> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<4xi32>
    %1 = stablehlo.sign %arg0 : tensor<4xi32>
    %2 = stablehlo.sign %arg1 : tensor<4xi32>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<4xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %7 = stablehlo.and %3, %6 : tensor<4xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %9 = stablehlo.subtract %0, %8 : tensor<4xi32>
    %10 = call @_where(%7, %9, %0) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    return %10 : tensor<4xi32>
  }
  func.func private @_where(%arg0: tensor<4xi1>, %arg1: tensor<4xi32>, %arg2: tensor<4xi32>) -> tensor<4xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4xi1>, tensor<4xi32>
    return %0 : tensor<4xi32>
  }
}
