"builtin.module"() <{sym_name = "jit_floor_divide"}> ({
  "func.func"() <{function_type = (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<4xui64>, %arg3: tensor<4xui64>):
    %1 = "func.call"(%arg2, %arg3) <{callee = @floor_divide}> : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
    "func.return"(%1) : (tensor<4xui64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>, sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xui64>, %arg1: tensor<4xui64>):
    %0 = "stablehlo.divide"(%arg0, %arg1) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
    "func.return"(%0) : (tensor<4xui64>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
