module @jit_remainder attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi8>, %arg1: tensor<4xi8>) -> (tensor<4xi8> {jax.result_info = "result"}) {
    %0 = call @remainder(%arg0, %arg1) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    return %0 : tensor<4xi8>
  }
  func.func private @remainder(%arg0: tensor<4xi8>, %arg1: tensor<4xi8>) -> tensor<4xi8> {
    %c = stablehlo.constant dense<0> : tensor<i8>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i8>) -> tensor<4xi8>
    %1 = stablehlo.compare EQ, %arg1, %0, SIGNED : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i8>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i8>) -> tensor<4xi8>
    %3 = call @_where(%1, %2, %arg1) : (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    %4 = stablehlo.remainder %arg0, %3 : tensor<4xi8>
    %c_1 = stablehlo.constant dense<0> : tensor<i8>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i8>) -> tensor<4xi8>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i8>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i8>) -> tensor<4xi8>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i8>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i8>) -> tensor<4xi8>
    %10 = stablehlo.compare LT, %3, %9, SIGNED : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %12 = stablehlo.and %11, %6 : tensor<4xi1>
    %13 = stablehlo.add %4, %3 : tensor<4xi8>
    %14 = stablehlo.select %12, %13, %4 : tensor<4xi1>, tensor<4xi8>
    return %14 : tensor<4xi8>
  }
  func.func private @_where(%arg0: tensor<4xi1>, %arg1: tensor<4xi8>, %arg2: tensor<4xi8>) -> tensor<4xi8> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4xi1>, tensor<4xi8>
    return %0 : tensor<4xi8>
  }
}
