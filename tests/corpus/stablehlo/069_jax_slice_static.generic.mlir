"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x1xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 3, 4>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 3, 4>, start_indices = array<i64: 0, 1>, strides = array<i64: 2, 1>}> : (tensor<3x4xf32>) -> tensor<2x3xf32>
    %2 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 3, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> tensor<3x1xf32>
    %3 = "stablehlo.reshape"(%2) : (tensor<3x1xf32>) -> tensor<3xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xf32>) -> tensor<3x1xf32>
    "func.return"(%0, %1, %4) : (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x1xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
