module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<5xi64> {jax.result_info = "result[0]"}, tensor<2x3xi32> {jax.result_info = "result[1]"}, tensor<3x3xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.iota dim = 0 : tensor<5xi64>
    %1 = stablehlo.iota dim = 1 : tensor<2x3xi32>
    %2 = stablehlo.iota dim = 0 : tensor<3x3xi64>
    %3 = stablehlo.iota dim = 1 : tensor<3x3xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<3x3xi64>
    %5 = stablehlo.add %2, %4 : tensor<3x3xi64>
    %6 = stablehlo.compare EQ, %5, %3, SIGNED : (tensor<3x3xi64>, tensor<3x3xi64>) -> tensor<3x3xi1>
    %7 = stablehlo.convert %6 : (tensor<3x3xi1>) -> tensor<3x3xf32>
    return %0, %1, %7 : tensor<5xi64>, tensor<2x3xi32>, tensor<3x3xf32>
  }
}
