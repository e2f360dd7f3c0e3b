"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.rsqrt"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.cbrt"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.sine"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.cosine"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.tan"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.tanh"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0, %1, %2, %3, %4, %5) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
