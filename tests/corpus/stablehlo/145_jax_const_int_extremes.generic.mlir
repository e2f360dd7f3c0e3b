"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xi8>, tensor<4xui64>) -> (tensor<4xi8>, tensor<4xui64>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xi8>, %arg1: tensor<4xui64>):
    %0 = "stablehlo.constant"() <{value = dense<[-128, 127, 0, 1]> : tensor<4xi8>}> : () -> tensor<4xi8>
    %1 = "stablehlo.constant"() <{value = dense<[0, 18446744073709551615, 9223372036854775808, 1]> : tensor<4xui64>}> : () -> tensor<4xui64>
    %2 = "stablehlo.add"(%arg0, %0) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    %3 = "stablehlo.xor"(%arg1, %1) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
    "func.return"(%2, %3) : (tensor<4xi8>, tensor<4xui64>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
