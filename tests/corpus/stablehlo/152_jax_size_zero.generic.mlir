"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<0xf32>, tensor<3x0xf32>) -> (tensor<0xf32>, tensor<3xf32>, tensor<0xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<0xf32>, %arg1: tensor<3x0xf32>):
    %0 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<0xf32>
    %2 = "stablehlo.multiply"(%arg0, %1) : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.reduce"(%arg1, %3) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %6 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%6) : (tensor<f32>) -> ()
    }) : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>
    %5 = "stablehlo.concatenate"(%arg0, %arg0) <{dimension = 0 : i64}> : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
    "func.return"(%2, %4, %5) : (tensor<0xf32>, tensor<3xf32>, tensor<0xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
