"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>):
    %0 = "stablehlo.or"(%arg0, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %1 = "stablehlo.xor"(%arg0, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %2 = "stablehlo.not"(%arg0) : (tensor<4xi32>) -> tensor<4xi32>
    %3 = "stablehlo.add"(%2, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %4 = "stablehlo.popcnt"(%arg0) : (tensor<4xi32>) -> tensor<4xi32>
    %5 = "stablehlo.count_leading_zeros"(%arg1) : (tensor<4xi32>) -> tensor<4xi32>
    %6 = "stablehlo.add"(%4, %5) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    "func.return"(%0, %1, %3, %6) : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
