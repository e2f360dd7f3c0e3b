module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<f32>) {
    %0:2 = chlo.scan(%arg0) inits (%arg1) dimension=0  attributes {is_reverse = false} {
    ^bb0(%input: tensor<f32>, %carry: tensor<f32>):
      %1 = stablehlo.add %input, %carry : tensor<f32>
      stablehlo.return %1, %1 : tensor<f32>, tensor<f32>
    } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
    return
  }
}
