"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf16>, tensor<4xbf16>) -> tensor<4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf16>, %arg1: tensor<4xbf16>):
    %0 = "stablehlo.convert"(%arg0) : (tensor<4xf16>) -> tensor<4xf32>
    %1 = "stablehlo.convert"(%arg1) : (tensor<4xbf16>) -> tensor<4xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%2) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
