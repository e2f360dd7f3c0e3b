module {
  func.func @tokens(%arg0: !stablehlo.token, %arg1: tensor<2xf32>) -> (!stablehlo.token, tuple<tensor<2xf32>, tensor<i32>>) {
    %0 = stablehlo.after_all %arg0, %arg0 : !stablehlo.token
    %c = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.tuple %arg1, %c : tuple<tensor<2xf32>, tensor<i32>>
    return %0, %1 : !stablehlo.token, tuple<tensor<2xf32>, tensor<i32>>
  }
}
