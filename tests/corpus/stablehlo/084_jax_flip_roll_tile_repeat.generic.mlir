"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<3x4xf32>):
    %4 = "func.call"(%arg2) <{callee = @_flip}> : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %5 = "func.call"(%arg2) <{callee = @_roll_static}> : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %6 = "stablehlo.reshape"(%arg2) : (tensor<3x4xf32>) -> tensor<1x3x1x4xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x3x1x4xf32>) -> tensor<2x3x1x4xf32>
    %8 = "stablehlo.reshape"(%7) : (tensor<2x3x1x4xf32>) -> tensor<6x4xf32>
    %9 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<3x4xf32>) -> tensor<3x2x4xf32>
    %10 = "stablehlo.reshape"(%9) : (tensor<3x2x4xf32>) -> tensor<6x4xf32>
    "func.return"(%4, %5, %8, %10) : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "_flip", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<3x4xf32>):
    %3 = "stablehlo.reverse"(%arg1) <{dimensions = array<i64: 0>}> : (tensor<3x4xf32>) -> tensor<3x4xf32>
    "func.return"(%3) : (tensor<3x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "_roll_static", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x4xf32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 3, 4>, start_indices = array<i64: 0, 3>, strides = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> tensor<3x1xf32>
    %1 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 3, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> tensor<3x3xf32>
    %2 = "stablehlo.concatenate"(%0, %1) <{dimension = 1 : i64}> : (tensor<3x1xf32>, tensor<3x3xf32>) -> tensor<3x4xf32>
    "func.return"(%2) : (tensor<3x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
