"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<6xf32>) -> (tensor<f32>, tensor<6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<6xf32>):
    %7 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.reshape"(%arg7) : (tensor<6xf32>) -> tensor<3x2xf32>
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x2xf32>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %12:4 = "stablehlo.while"(%8, %11, %7, %10) ({
    ^bb0(%arg12: tensor<3x2xf32>, %arg13: tensor<i64>, %arg14: tensor<f32>, %arg15: tensor<3x2xf32>):
      %31 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %32 = "stablehlo.compare"(%arg13, %31) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%32) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<3x2xf32>, %arg9: tensor<i64>, %arg10: tensor<f32>, %arg11: tensor<3x2xf32>):
      %14 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %15 = "stablehlo.subtract"(%14, %arg9) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %16 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %17 = "stablehlo.subtract"(%15, %16) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %18 = "func.call"(%arg8, %17) <{callee = @dynamic_index_in_dim}> : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>
      %19 = "stablehlo.slice"(%18) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1xf32>
      %20 = "stablehlo.reshape"(%19) : (tensor<1xf32>) -> tensor<f32>
      %21:2 = "func.call"(%arg10, %20) <{callee = @closed_call}> : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %22 = "stablehlo.slice"(%18) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1xf32>
      %23 = "stablehlo.reshape"(%22) : (tensor<1xf32>) -> tensor<f32>
      %24:2 = "func.call"(%21#0, %23) <{callee = @closed_call}> : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %25 = "stablehlo.broadcast_in_dim"(%24#1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
      %26 = "stablehlo.broadcast_in_dim"(%21#1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
      %27 = "stablehlo.concatenate"(%25, %26) <{dimension = 0 : i64}> : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
      %28 = "func.call"(%arg11, %27, %17) <{callee = @dynamic_update_index_in_dim}> : (tensor<3x2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<3x2xf32>
      %29 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %30 = "stablehlo.add"(%arg9, %29) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%arg8, %30, %24#0, %28) : (tensor<3x2xf32>, tensor<i64>, tensor<f32>, tensor<3x2xf32>) -> ()
    }) : (tensor<3x2xf32>, tensor<i64>, tensor<f32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<i64>, tensor<f32>, tensor<3x2xf32>)
    %13 = "stablehlo.reshape"(%12#3) : (tensor<3x2xf32>) -> tensor<6xf32>
    "func.return"(%12#2, %13) : (tensor<f32>, tensor<6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>, sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<3x2xf32>, %arg6: tensor<i64>):
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %5 = "stablehlo.dynamic_slice"(%arg5, %arg6, %4) <{slice_sizes = array<i64: 1, 2>}> : (tensor<3x2xf32>, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>
    %6 = "stablehlo.reshape"(%5) : (tensor<1x2xf32>) -> tensor<2xf32>
    "func.return"(%6) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %3 = "stablehlo.multiply"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%3, %arg3) : (tensor<f32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<3x2xf32>, sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x2xf32>, %arg1: tensor<2xf32>, %arg2: tensor<i64>):
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1x2xf32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %2 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg2, %1) : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<i64>, tensor<i64>) -> tensor<3x2xf32>
    "func.return"(%2) : (tensor<3x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
