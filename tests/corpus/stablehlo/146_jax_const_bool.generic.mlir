"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xi1>) -> tensor<4xi1>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xi1>):
    %0 = "stablehlo.constant"() <{value = dense<[true, false, true, true]> : tensor<4xi1>}> : () -> tensor<4xi1>
    %1 = "stablehlo.and"(%arg0, %0) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    "func.return"(%1) : (tensor<4xi1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
