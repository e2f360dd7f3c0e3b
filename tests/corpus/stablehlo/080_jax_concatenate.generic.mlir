"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<9x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xf32>):
    %0 = "stablehlo.concatenate"(%arg0, %arg1, %arg0) <{dimension = 0 : i64}> : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<9x4xf32>
    "func.return"(%0) : (tensor<9x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
