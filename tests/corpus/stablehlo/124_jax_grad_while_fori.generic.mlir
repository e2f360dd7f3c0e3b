"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<f32>) -> tensor<f32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg8: tensor<f32>):
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %11:3 = "stablehlo.while"(%10, %arg8, %9) ({
    ^bb0(%arg18: tensor<i64>, %arg19: tensor<f32>, %arg20: tensor<3xf32>):
      %29 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %30 = "stablehlo.compare"(%arg18, %29) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%30) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg15: tensor<i64>, %arg16: tensor<f32>, %arg17: tensor<3xf32>):
      %25:2 = "func.call"(%arg16) <{callee = @closed_call}> : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %26 = "func.call"(%arg17, %25#1, %arg15) <{callee = @dynamic_update_index_in_dim}> : (tensor<3xf32>, tensor<f32>, tensor<i64>) -> tensor<3xf32>
      %27 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %28 = "stablehlo.add"(%arg15, %27) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%28, %25#0, %26) : (tensor<i64>, tensor<f32>, tensor<3xf32>) -> ()
    }) : (tensor<i64>, tensor<f32>, tensor<3xf32>) -> (tensor<i64>, tensor<f32>, tensor<3xf32>)
    %12 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %14:3 = "stablehlo.while"(%11#2, %13, %12) ({
    ^bb0(%arg12: tensor<3xf32>, %arg13: tensor<i64>, %arg14: tensor<f32>):
      %23 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %24 = "stablehlo.compare"(%arg13, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%24) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg9: tensor<3xf32>, %arg10: tensor<i64>, %arg11: tensor<f32>):
      %15 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %16 = "stablehlo.subtract"(%15, %arg10) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %17 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %18 = "stablehlo.subtract"(%16, %17) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %19 = "func.call"(%arg9, %18) <{callee = @dynamic_index_in_dim}> : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
      %20 = "func.call"(%arg11, %19) <{callee = @closed_call_0}> : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %21 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %22 = "stablehlo.add"(%arg10, %21) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%arg9, %22, %20) : (tensor<3xf32>, tensor<i64>, tensor<f32>) -> ()
    }) : (tensor<3xf32>, tensor<i64>, tensor<f32>) -> (tensor<3xf32>, tensor<i64>, tensor<f32>)
    "func.return"(%14#2) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>) -> (tensor<f32>, tensor<f32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<f32>):
    %7 = "stablehlo.multiply"(%arg7, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%7, %arg7) : (tensor<f32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>, tensor<f32>, tensor<i64>) -> tensor<3xf32>, sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<3xf32>, %arg5: tensor<f32>, %arg6: tensor<i64>):
    %5 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %6 = "stablehlo.dynamic_update_slice"(%arg4, %5, %arg6) : (tensor<3xf32>, tensor<1xf32>, tensor<i64>) -> tensor<3xf32>
    "func.return"(%6) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>, tensor<i64>) -> tensor<f32>, sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<3xf32>, %arg3: tensor<i64>):
    %3 = "stablehlo.dynamic_slice"(%arg2, %arg3) <{slice_sizes = array<i64: 1>}> : (tensor<3xf32>, tensor<i64>) -> tensor<1xf32>
    %4 = "stablehlo.reshape"(%3) : (tensor<1xf32>) -> tensor<f32>
    "func.return"(%4) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "closed_call_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<f32>):
    %0 = "stablehlo.multiply"(%arg1, %arg0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.add"(%0, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%2) : (tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
