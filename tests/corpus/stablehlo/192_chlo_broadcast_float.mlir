module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<1xf32>) {
    %0 = chlo.broadcast_add %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %1 = chlo.broadcast_atan2 %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %2 = chlo.broadcast_divide %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %3 = chlo.broadcast_maximum %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %4 = chlo.broadcast_minimum %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %5 = chlo.broadcast_multiply %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %6 = chlo.broadcast_next_after %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %7 = chlo.broadcast_polygamma %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %8 = chlo.broadcast_power %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %9 = chlo.broadcast_remainder %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %10 = chlo.broadcast_subtract %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %11 = chlo.broadcast_zeta %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %12 = chlo.broadcast_complex %arg0, %arg1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>
    %13 = chlo.broadcast_compare %arg0, %arg1 {comparison_direction = #chlo<comparison_direction LT>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
    %14 = chlo.broadcast_compare %arg0, %arg1 {compare_type = #chlo<comparison_type FLOAT>, comparison_direction = #chlo<comparison_direction EQ>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
    %15 = chlo.broadcast_add %arg0, %arg1 {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    return
  }
}
