module {
  func.func @main(%arg0: tensor<1x4x1xf32>) {
    stablehlo.optimization_barrier()
    %0 = stablehlo.custom_call @x() {has_side_effect = true} : () -> tensor<4xf32>
    %1 = stablehlo.concatenate %0, dim = 0 : (tensor<4xf32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.dynamic_slice %0, %c, sizes = [2] : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
    %3 = stablehlo.slice %0 [0:4] : (tensor<4xf32>) -> tensor<4xf32>
    %4 = stablehlo.convolution(%arg0, %arg0) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x1x1xf32>
    %5 = stablehlo.compare LT, %0, %0, NOTYPE : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %6 = stablehlo.cholesky %4 : tensor<1x1x1xf32>
    %7 = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0], algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %8 = stablehlo.custom_call @"not-valid id"(%0) {backend_config = "x"} : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
}
