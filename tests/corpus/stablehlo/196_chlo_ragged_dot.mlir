module {
  func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<2x3x5xf32>, %arg2: tensor<2xi64>) {
    %0 = "chlo.ragged_dot"(%arg0, %arg1, %arg2) <{precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>], ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}> : (tensor<4x3xf32>, tensor<2x3x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
    return
  }
}
