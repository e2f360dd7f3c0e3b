"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = () -> tensor<4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
    %2 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %6:3 = "stablehlo.while"(%5, %2, %4) ({
    ^bb0(%arg7: tensor<i64>, %arg8: tensor<f32>, %arg9: tensor<4xf32>):
      %15 = "stablehlo.constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
      %16 = "stablehlo.compare"(%arg7, %15) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%16) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg4: tensor<i64>, %arg5: tensor<f32>, %arg6: tensor<4xf32>):
      %7 = "stablehlo.constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
      %8 = "stablehlo.subtract"(%7, %arg4) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %9 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %10 = "stablehlo.subtract"(%8, %9) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %11:2 = "func.call"(%arg5) <{callee = @closed_call}> : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %12 = "func.call"(%arg6, %11#1, %10) <{callee = @dynamic_update_index_in_dim}> : (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
      %13 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %14 = "stablehlo.add"(%arg4, %13) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%14, %11#0, %12) : (tensor<i64>, tensor<f32>, tensor<4xf32>) -> ()
    }) : (tensor<i64>, tensor<f32>, tensor<4xf32>) -> (tensor<i64>, tensor<f32>, tensor<4xf32>)
    "func.return"(%6#2) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>) -> (tensor<f32>, tensor<f32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<f32>):
    "func.return"(%arg3, %arg3) : (tensor<f32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>, sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<f32>, %arg2: tensor<i64>):
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %1 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg2) : (tensor<4xf32>, tensor<1xf32>, tensor<i64>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
