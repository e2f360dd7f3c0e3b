"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xi1>) -> (tensor<i1>, tensor<4xi1>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xi1>):
    %0 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg3: tensor<i1>, %arg4: tensor<i1>):
      %5 = "stablehlo.or"(%arg3, %arg4) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }) : (tensor<3x4xi1>, tensor<i1>) -> tensor<i1>
    %2 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %3 = "stablehlo.reduce"(%arg0, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg1: tensor<i1>, %arg2: tensor<i1>):
      %4 = "stablehlo.and"(%arg1, %arg2) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%4) : (tensor<i1>) -> ()
    }) : (tensor<3x4xi1>, tensor<i1>) -> tensor<4xi1>
    "func.return"(%1, %3) : (tensor<i1>, tensor<4xi1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
