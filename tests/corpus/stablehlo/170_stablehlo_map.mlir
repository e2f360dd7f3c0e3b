module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) {
    %0 = "stablehlo.map"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %1 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return
  }
}
