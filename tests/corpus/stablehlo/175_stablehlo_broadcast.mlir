module {
  func.func @main(%arg0: tensor<3xf32>) {
    %0 = stablehlo.broadcast %arg0, sizes = [2, 4] : (tensor<3xf32>) -> tensor<2x4x3xf32>
    return
  }
}
