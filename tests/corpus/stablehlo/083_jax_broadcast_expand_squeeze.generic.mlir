"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<1x3x4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
    %2 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 1, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> tensor<1x4xf32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1x4xf32>) -> tensor<4xf32>
    "func.return"(%0, %1, %3) : (tensor<2x3x4xf32>, tensor<1x3x4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
