"builtin.module"() <{sym_name = "jit_logsumexp"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<f32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %17 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.maximum"(%2, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.is_finite"(%3) : (tensor<f32>) -> tensor<i1>
    %5 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.select"(%4, %3, %5) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<3x4xf32>
    %9 = "stablehlo.subtract"(%arg0, %8) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %10 = "stablehlo.exponential"(%9) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %16 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<f32>
    %13 = "stablehlo.abs"(%12) : (tensor<f32>) -> tensor<f32>
    %14 = "stablehlo.log"(%13) : (tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.add"(%14, %6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%15) : (tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
