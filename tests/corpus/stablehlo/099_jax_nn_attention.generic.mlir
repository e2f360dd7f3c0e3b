"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<1x3x2x4xf32>, tensor<1x5x2x4xf32>, tensor<1x5x2x4xf32>) -> tensor<1x3x2x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1x3x2x4xf32>, %arg1: tensor<1x5x2x4xf32>, %arg2: tensor<1x5x2x4xf32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x3x2x4xf32>) -> tensor<1x3x2x1x4xf32>
    %1 = "stablehlo.dot_general"(%0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1x3x2x1x4xf32>, tensor<1x5x2x4xf32>) -> tensor<1x2x3x1x5xf32>
    %2 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x3x1x5xf32>
    %4 = "stablehlo.multiply"(%1, %3) : (tensor<1x2x3x1x5xf32>, tensor<1x2x3x1x5xf32>) -> tensor<1x2x3x1x5xf32>
    %5 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.reduce"(%4, %5) <{dimensions = array<i64: 4>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %26 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%26) : (tensor<f32>) -> ()
    }) : (tensor<1x2x3x1x5xf32>, tensor<f32>) -> tensor<1x2x3x1xf32>
    %7 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x3x1xf32>
    %9 = "stablehlo.maximum"(%8, %6) : (tensor<1x2x3x1xf32>, tensor<1x2x3x1xf32>) -> tensor<1x2x3x1xf32>
    %10 = "stablehlo.transpose"(%9) <{permutation = array<i64: 3, 0, 1, 2>}> : (tensor<1x2x3x1xf32>) -> tensor<1x1x2x3xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3x1xf32>
    %12 = "stablehlo.transpose"(%4) <{permutation = array<i64: 3, 0, 1, 2, 4>}> : (tensor<1x2x3x1x5xf32>) -> tensor<1x1x2x3x5xf32>
    %13 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x1x2x3x1xf32>) -> tensor<1x1x2x3x5xf32>
    %14 = "stablehlo.subtract"(%12, %13) : (tensor<1x1x2x3x5xf32>, tensor<1x1x2x3x5xf32>) -> tensor<1x1x2x3x5xf32>
    %15 = "stablehlo.exponential"(%14) : (tensor<1x1x2x3x5xf32>) -> tensor<1x1x2x3x5xf32>
    %16 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 4>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %25 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%25) : (tensor<f32>) -> ()
    }) : (tensor<1x1x2x3x5xf32>, tensor<f32>) -> tensor<1x1x2x3xf32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3x1xf32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x1x2x3x1xf32>) -> tensor<1x1x2x3x5xf32>
    %20 = "stablehlo.divide"(%15, %19) : (tensor<1x1x2x3x5xf32>, tensor<1x1x2x3x5xf32>) -> tensor<1x1x2x3x5xf32>
    %21 = "stablehlo.dot_general"(%arg2, %20) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [1, 2], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [4]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1x5x2x4xf32>, tensor<1x1x2x3x5xf32>) -> tensor<1x2x4x1x3xf32>
    %22 = "stablehlo.transpose"(%21) <{permutation = array<i64: 3, 0, 4, 1, 2>}> : (tensor<1x2x4x1x3xf32>) -> tensor<1x1x3x2x4xf32>
    %23 = "stablehlo.transpose"(%22) <{permutation = array<i64: 1, 2, 3, 0, 4>}> : (tensor<1x1x3x2x4xf32>) -> tensor<1x3x2x1x4xf32>
    %24 = "stablehlo.reshape"(%23) : (tensor<1x3x2x1x4xf32>) -> tensor<1x3x2x4xf32>
    "func.return"(%24) : (tensor<1x3x2x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
