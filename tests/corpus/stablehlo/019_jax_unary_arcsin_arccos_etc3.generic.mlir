"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "chlo.asin"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "chlo.acos"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "chlo.atan"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "chlo.sinh"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "chlo.cosh"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "chlo.asinh"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0, %1, %2, %3, %4, %5) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
