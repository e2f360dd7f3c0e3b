"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4xf32>):
    %17 = "stablehlo.constant"() <{value = dense<[1.000000e+00, -2.000000e+00, 3.000000e+00]> : tensor<3xf64>}> : () -> tensor<3xf64>
    %18 = "func.call"(%17, %arg5) <{callee = @polyval}> : (tensor<3xf64>, tensor<4xf32>) -> tensor<4xf64>
    "func.return"(%18) : (tensor<4xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf64>, tensor<4xf32>) -> tensor<4xf64>, sym_name = "polyval", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3xf64>, %arg4: tensor<4xf32>):
    %3 = "stablehlo.convert"(%arg4) : (tensor<4xf32>) -> tensor<4xf64>
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<4xf64>
    %6 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 0>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<3xf64>) -> tensor<0xf64>
    %7 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 3>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<3xf64>) -> tensor<3xf64>
    %8 = "stablehlo.slice"(%7) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<3xf64>) -> tensor<1xf64>
    %9 = "stablehlo.reshape"(%8) : (tensor<1xf64>) -> tensor<f64>
    %10 = "func.call"(%3, %5, %9) <{callee = @closed_call}> : (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    %11 = "stablehlo.slice"(%7) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<3xf64>) -> tensor<1xf64>
    %12 = "stablehlo.reshape"(%11) : (tensor<1xf64>) -> tensor<f64>
    %13 = "func.call"(%3, %10, %12) <{callee = @closed_call}> : (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    %14 = "stablehlo.slice"(%7) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<3xf64>) -> tensor<1xf64>
    %15 = "stablehlo.reshape"(%14) : (tensor<1xf64>) -> tensor<f64>
    %16 = "func.call"(%3, %13, %15) <{callee = @closed_call}> : (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    "func.return"(%16) : (tensor<4xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>, sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf64>, %arg1: tensor<4xf64>, %arg2: tensor<f64>):
    %0 = "stablehlo.multiply"(%arg1, %arg0) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<4xf64>
    %2 = "stablehlo.add"(%0, %1) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    "func.return"(%2) : (tensor<4xf64>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
