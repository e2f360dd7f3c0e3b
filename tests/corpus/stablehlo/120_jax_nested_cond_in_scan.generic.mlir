"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<4xf32>):
    %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %13 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %14:4 = "stablehlo.while"(%arg7, %13, %10, %12) ({
    ^bb0(%arg12: tensor<4xf32>, %arg13: tensor<i64>, %arg14: tensor<f32>, %arg15: tensor<4xf32>):
      %20 = "stablehlo.constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
      %21 = "stablehlo.compare"(%arg13, %20) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%21) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<4xf32>, %arg9: tensor<i64>, %arg10: tensor<f32>, %arg11: tensor<4xf32>):
      %15 = "func.call"(%arg8, %arg9) <{callee = @dynamic_index_in_dim}> : (tensor<4xf32>, tensor<i64>) -> tensor<f32>
      %16:2 = "func.call"(%arg10, %15) <{callee = @closed_call}> : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %17 = "func.call"(%arg11, %16#1, %arg9) <{callee = @dynamic_update_index_in_dim}> : (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
      %18 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %19 = "stablehlo.add"(%arg9, %18) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%arg8, %19, %16#0, %17) : (tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<4xf32>) -> ()
    }) : (tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<4xf32>)
    "func.return"(%14#2, %14#3) : (tensor<f32>, tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>, tensor<i64>) -> tensor<f32>, sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<4xf32>, %arg6: tensor<i64>):
    %8 = "stablehlo.dynamic_slice"(%arg5, %arg6) <{slice_sizes = array<i64: 1>}> : (tensor<4xf32>, tensor<i64>) -> tensor<1xf32>
    %9 = "stablehlo.reshape"(%8) : (tensor<1xf32>) -> tensor<f32>
    "func.return"(%9) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.compare"(%arg4, %2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = "stablehlo.convert"(%3) : (tensor<i1>) -> tensor<i32>
    %5 = "stablehlo.case"(%4) ({
      %7 = "stablehlo.subtract"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }, {
      %6 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%6) : (tensor<f32>) -> ()
    }) : (tensor<i32>) -> tensor<f32>
    "func.return"(%5, %arg3) : (tensor<f32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>, sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<f32>, %arg2: tensor<i64>):
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %1 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg2) : (tensor<4xf32>, tensor<1xf32>, tensor<i64>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
