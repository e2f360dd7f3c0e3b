module {
  func.func @main(%arg0: tensor<4xcomplex<f32>>) {
    %0 = chlo._asin_acos_kernel %arg0 : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
    return
  }
}
