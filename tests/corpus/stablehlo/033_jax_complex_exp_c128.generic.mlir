"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3xcomplex<f64>>):
    %0 = "stablehlo.exponential"(%arg0) : (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
    %1 = "stablehlo.sqrt"(%arg0) : (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
    %2 = "stablehlo.divide"(%0, %1) : (tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
    "func.return"(%2) : (tensor<3xcomplex<f64>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
