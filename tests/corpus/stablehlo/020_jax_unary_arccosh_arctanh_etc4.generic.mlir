"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4xf32>):
    %1 = "func.call"(%arg1) <{callee = @arccosh}> : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "chlo.atanh"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.negate"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.exponential"(%3) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %7 = "stablehlo.add"(%6, %4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %10 = "stablehlo.divide"(%9, %7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %11 = "chlo.erf"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %12 = "chlo.erfc"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %13 = "chlo.erf_inv"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1, %2, %10, %11, %12, %13) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "arccosh", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "chlo.acosh"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
