"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<2x6xf32>, tensor<4x3xf32>, tensor<2x3x2xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<3x4xf32>) -> tensor<2x6xf32>
    %1 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<3x4xf32>) -> tensor<4x3xf32>
    %2 = "stablehlo.reshape"(%arg0) : (tensor<3x4xf32>) -> tensor<3x2x2xf32>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1>}> : (tensor<3x2x2xf32>) -> tensor<2x3x2xf32>
    "func.return"(%0, %1, %3) : (tensor<2x6xf32>, tensor<4x3xf32>, tensor<2x3x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
