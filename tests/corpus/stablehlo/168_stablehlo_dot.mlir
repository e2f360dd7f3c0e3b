module {
  func.func @main(%arg0: tensor<3x4xf32>, %arg1: tensor<4x5xf32>) {
    %0 = stablehlo.dot %arg0, %arg1 : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %1 = stablehlo.dot %arg0, %arg1, precision = [HIGH, HIGHEST] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    return
  }
}
