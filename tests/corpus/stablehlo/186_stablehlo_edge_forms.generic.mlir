"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1x4x1xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<1x4x1xf32>):
    "stablehlo.optimization_barrier"() : () -> ()
    %0 = "stablehlo.custom_call"() <{call_target_name = "x", has_side_effect = true}> : () -> tensor<4xf32>
    %1 = "stablehlo.concatenate"(%0) <{dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.dynamic_slice"(%0, %2) <{slice_sizes = array<i64: 2>}> : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
    %4 = "stablehlo.slice"(%0) <{limit_indices = array<i64: 4>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.convolution"(%arg0, %arg0) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64}> : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x1x1xf32>
    %6 = "stablehlo.compare"(%0, %0) <{compare_type = #stablehlo<comparison_type NOTYPE>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %7 = "stablehlo.cholesky"(%5) : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
    %8 = "stablehlo.dot_general"(%0, %0) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %9 = "stablehlo.custom_call"(%0) <{backend_config = "x", call_target_name = "not-valid id"}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
