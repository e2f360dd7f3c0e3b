"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4xf32>):
    %1 = "stablehlo.negate"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.abs"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.sign"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.floor"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.ceil"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "func.call"(%arg1) <{callee = @round}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1, %2, %3, %4, %5, %6) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "round", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.round_nearest_even"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
