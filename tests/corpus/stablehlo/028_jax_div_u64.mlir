module @jit_floor_divide attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xui64>, %arg1: tensor<4xui64>) -> (tensor<4xui64> {jax.result_info = "result"}) {
    %0 = call @floor_divide(%arg0, %arg1) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
    return %0 : tensor<4xui64>
  }
  func.func private @floor_divide(%arg0: tensor<4xui64>, %arg1: tensor<4xui64>) -> tensor<4xui64> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<4xui64>
    return %0 : tensor<4xui64>
  }
}
