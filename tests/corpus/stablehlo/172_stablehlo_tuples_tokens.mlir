module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) {
    %0 = stablehlo.tuple %arg0, %arg1 : tuple<tensor<4xf32>, tensor<i32>>
    %1 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<i32>
    %2 = stablehlo.create_token : !stablehlo.token
    %3 = stablehlo.after_all %2, %arg2 : !stablehlo.token
    %4 = stablehlo.after_all  : !stablehlo.token
    %5 = stablehlo.tuple  : tuple<>
    return
  }
}
