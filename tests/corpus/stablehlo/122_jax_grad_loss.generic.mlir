"builtin.module"() <{sym_name = "jit__loss"}> ({
  "func.func"() <{function_type = (tensor<4x2xf32>, tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>, res_attrs = [{jax.result_info = "result[0]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x2xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<3x2xf32>):
    %0 = "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
    %1 = "stablehlo.tanh"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %2 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x2xf32>
    %4 = "stablehlo.subtract"(%3, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %5 = "stablehlo.subtract"(%1, %arg2) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %6 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x2xf32>
    %8 = "stablehlo.multiply"(%7, %5) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %9 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.constant"() <{value = dense<6.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.divide"(%9, %10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x2xf32>
    %13 = "stablehlo.multiply"(%12, %8) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %14 = "stablehlo.multiply"(%13, %4) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %15 = "stablehlo.multiply"(%14, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %16 = "stablehlo.add"(%14, %15) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %17 = "stablehlo.dot_general"(%16, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %18 = "stablehlo.transpose"(%17) <{permutation = array<i64: 1, 0>}> : (tensor<2x4xf32>) -> tensor<4x2xf32>
    "func.return"(%18) : (tensor<4x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
