module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi8>, %arg1: tensor<4xui64>) -> (tensor<4xi8> {jax.result_info = "result[0]"}, tensor<4xui64> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<[-128, 127, 0, 1]> : tensor<4xi8>
    %c_0 = stablehlo.constant dense<[0, 18446744073709551615, 9223372036854775808, 1]> : tensor<4xui64>
    %0 = stablehlo.add %arg0, %c : tensor<4xi8>
    %1 = stablehlo.xor %arg1, %c_0 : tensor<4xui64>
    return %0, %1 : tensor<4xi8>, tensor<4xui64>
  }
}
