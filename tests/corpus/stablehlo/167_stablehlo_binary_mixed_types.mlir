module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<?xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
    %1 = stablehlo.multiply %arg1, %arg1 {tag} : tensor<?xf32>
    return
  }
}
