module {
  func.func @main(%arg0: tensor<4xi32>, %arg1: tensor<4xf32>) {
    %0 = stablehlo.compare GE, %arg0, %arg0 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %1 = stablehlo.compare LT, %arg1, %arg1, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    return
  }
}
