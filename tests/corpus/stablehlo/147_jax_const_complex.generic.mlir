"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xcomplex<f32>>):
    %0 = "stablehlo.constant"() <{value = dense<[(1.000000e+00,2.000000e+00), (-0.000000e+00,-5.000000e-01), (3.000000e+00,0.000000e+00), (0.000000e+00,0.000000e+00)]> : tensor<4xcomplex<f32>>}> : () -> tensor<4xcomplex<f32>>
    %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    "func.return"(%1) : (tensor<4xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
