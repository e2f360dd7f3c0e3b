module {
  func.func @main(%arg0: tensor<4xf32>) {
    %0 = chlo.constant dense<1.000000e+00> : tensor<4xf32>
    %1 = "chlo.constant_like"(%arg0) <{value = 2.000000e+00 : f32}> : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
}
