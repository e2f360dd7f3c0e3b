"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf16>, tensor<4xi1>, tensor<4xui8>, tensor<4xcomplex<f32>>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.convert"(%arg0) : (tensor<4xf32>) -> tensor<4xi32>
    %1 = "stablehlo.convert"(%arg0) : (tensor<4xf32>) -> tensor<4xf16>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %4 = "stablehlo.compare"(%arg0, %3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %5 = "stablehlo.convert"(%4) : (tensor<4xi1>) -> tensor<4xi1>
    %6 = "stablehlo.convert"(%arg0) : (tensor<4xf32>) -> tensor<4xui8>
    %7 = "stablehlo.convert"(%arg0) : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
    "func.return"(%0, %1, %5, %6, %7) : (tensor<4xi32>, tensor<4xf16>, tensor<4xi1>, tensor<4xui8>, tensor<4xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
