"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<6x7xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<3x4xf32>):
    %2 = "stablehlo.constant"() <{value = dense<7.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %3 = "func.call"(%arg2, %2) <{callee = @_pad}> : (tensor<3x4xf32>, tensor<f64>) -> tensor<6x7xf32>
    "func.return"(%3) : (tensor<6x7xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<f64>) -> tensor<6x7xf32>, sym_name = "_pad", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<f64>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<f64>) -> tensor<f32>
    %1 = "stablehlo.pad"(%arg0, %0) <{edge_padding_high = array<i64: 2, 3>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<3x4xf32>, tensor<f32>) -> tensor<6x7xf32>
    "func.return"(%1) : (tensor<6x7xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
