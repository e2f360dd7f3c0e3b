module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare GT, %arg0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = stablehlo.convert %0 : (tensor<i1>) -> tensor<i32>
    %2:2 = "stablehlo.case"(%1) ({
      %3 = stablehlo.multiply %arg1, %arg2 : tensor<4xf32>
      stablehlo.return %3, %arg2 : tensor<4xf32>, tensor<4xf32>
    }, {
      %3 = stablehlo.add %arg1, %arg2 : tensor<4xf32>
      stablehlo.return %3, %arg1 : tensor<4xf32>, tensor<4xf32>
    }) : (tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>)
    return %2#0, %2#1 : tensor<4xf32>, tensor<4xf32>
  }
}
