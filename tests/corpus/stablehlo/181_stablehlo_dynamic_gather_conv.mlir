module {
  func.func @main(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2xi32>, %arg3: tensor<1x4x4x1xf32>, %arg4: tensor<3x3x1x1xf32>, %arg5: tensor<2x2xi32>) {
    %0 = "stablehlo.dynamic_gather"(%arg0, %arg1, %arg2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>}> : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x4xf32>
    %1 = "stablehlo.dynamic_conv"(%arg3, %arg4, %arg5) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64}> : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi32>) -> tensor<1x4x4x1xf32>
    return
  }
}
