module {
  func.func @main(%arg0: tensor<i1>, %arg1: tensor<4xf32>) {
    %0 = "stablehlo.if"(%arg0) ({
      stablehlo.return %arg1 : tensor<4xf32>
    }, {
      %1 = stablehlo.negate %arg1 : tensor<4xf32>
      stablehlo.return %1 : tensor<4xf32>
    }) : (tensor<i1>) -> tensor<4xf32>
    return
  }
}
