module {
  func.func @main(%arg0: tensor<3x3xf32>, %arg1: tensor<3x2xf32>) {
    %0 = stablehlo.cholesky %arg0, lower = true : tensor<3x3xf32>
    %1 = stablehlo.cholesky %arg0 : tensor<3x3xf32>
    %2 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    return
  }
}
