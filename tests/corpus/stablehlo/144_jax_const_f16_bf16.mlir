module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf16>, %arg1: tensor<4xbf16>) -> (tensor<4xf16> {jax.result_info = "result[0]"}, tensor<4xbf16> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<[9.997550e-02, 6.550400e+04, 5.960460e-08, -1.000000e+00]> : tensor<4xf16>
    %cst_0 = stablehlo.constant dense<[1.000980e-01, 3.004060e+38, 1.000000e+00, 2.000000e+00]> : tensor<4xbf16>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf16>
    %1 = stablehlo.multiply %arg1, %cst_0 : tensor<4xbf16>
    return %0, %1 : tensor<4xf16>, tensor<4xbf16>
  }
}
