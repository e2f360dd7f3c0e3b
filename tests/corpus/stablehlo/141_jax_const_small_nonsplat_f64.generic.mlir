"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf64>) -> tensor<4xf64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf64>):
    %0 = "stablehlo.constant"() <{value = dense<[1.000000e-01, 0.33333333333333331, 3.14159265358979, 1.000000e-300]> : tensor<4xf64>}> : () -> tensor<4xf64>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    "func.return"(%1) : (tensor<4xf64>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
