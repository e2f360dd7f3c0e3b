"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg8: tensor<3x4xf32>):
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %12:3 = "stablehlo.while"(%arg8, %11, %10) ({
    ^bb0(%arg12: tensor<3x4xf32>, %arg13: tensor<i64>, %arg14: tensor<3xf32>):
      %18 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %19 = "stablehlo.compare"(%arg13, %18) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%19) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg9: tensor<3x4xf32>, %arg10: tensor<i64>, %arg11: tensor<3xf32>):
      %13 = "func.call"(%arg9, %arg10) <{callee = @dynamic_index_in_dim}> : (tensor<3x4xf32>, tensor<i64>) -> tensor<4xf32>
      %14 = "func.call"(%13) <{callee = @closed_call}> : (tensor<4xf32>) -> tensor<f32>
      %15 = "func.call"(%arg11, %14, %arg10) <{callee = @dynamic_update_index_in_dim}> : (tensor<3xf32>, tensor<f32>, tensor<i64>) -> tensor<3xf32>
      %16 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %17 = "stablehlo.add"(%arg10, %16) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%arg9, %17, %15) : (tensor<3x4xf32>, tensor<i64>, tensor<3xf32>) -> ()
    }) : (tensor<3x4xf32>, tensor<i64>, tensor<3xf32>) -> (tensor<3x4xf32>, tensor<i64>, tensor<3xf32>)
    "func.return"(%12#2) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<i64>) -> tensor<4xf32>, sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<3x4xf32>, %arg7: tensor<i64>):
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %7 = "stablehlo.dynamic_slice"(%arg6, %arg7, %6) <{slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<i64>, tensor<i64>) -> tensor<1x4xf32>
    %8 = "stablehlo.reshape"(%7) : (tensor<1x4xf32>) -> tensor<4xf32>
    "func.return"(%8) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<f32>, sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4xf32>):
    %2 = "stablehlo.multiply"(%arg3, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.reduce"(%2, %3) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %5 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%5) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%4) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>, tensor<f32>, tensor<i64>) -> tensor<3xf32>, sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xf32>, %arg1: tensor<f32>, %arg2: tensor<i64>):
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %1 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg2) : (tensor<3xf32>, tensor<1xf32>, tensor<i64>) -> tensor<3xf32>
    "func.return"(%1) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
