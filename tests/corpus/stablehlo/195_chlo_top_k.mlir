module {
  func.func @main(%arg0: tensor<3x8xf32>) {
    %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<3x8xf32> -> (tensor<3x3xf32>, tensor<3x3xi32>)
    return
  }
}
