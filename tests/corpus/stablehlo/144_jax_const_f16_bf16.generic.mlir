"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf16>, tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xbf16>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf16>, %arg1: tensor<4xbf16>):
    %0 = "stablehlo.constant"() <{value = dense<[9.997550e-02, 6.550400e+04, 5.960460e-08, -1.000000e+00]> : tensor<4xf16>}> : () -> tensor<4xf16>
    %1 = "stablehlo.constant"() <{value = dense<[1.000980e-01, 3.004060e+38, 1.000000e+00, 2.000000e+00]> : tensor<4xbf16>}> : () -> tensor<4xbf16>
    %2 = "stablehlo.add"(%arg0, %0) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
    %3 = "stablehlo.multiply"(%arg1, %1) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
    "func.return"(%2, %3) : (tensor<4xf16>, tensor<4xbf16>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
