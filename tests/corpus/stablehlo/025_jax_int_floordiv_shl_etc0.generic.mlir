"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4xi32>, %arg6: tensor<4xi32>):
    %14 = "func.call"(%arg5, %arg6) <{callee = @floor_divide}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %15 = "stablehlo.shift_left"(%arg5, %arg6) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %16 = "stablehlo.shift_right_arithmetic"(%arg5, %arg6) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %17 = "stablehlo.shift_right_logical"(%arg5, %arg6) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %18 = "stablehlo.and"(%arg5, %arg6) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    "func.return"(%14, %15, %16, %17, %18) : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>, sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4xi32>, %arg4: tensor<4xi32>):
    %1 = "stablehlo.divide"(%arg3, %arg4) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %2 = "stablehlo.sign"(%arg3) : (tensor<4xi32>) -> tensor<4xi32>
    %3 = "stablehlo.sign"(%arg4) : (tensor<4xi32>) -> tensor<4xi32>
    %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %5 = "stablehlo.remainder"(%arg3, %arg4) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %8 = "stablehlo.compare"(%5, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %9 = "stablehlo.and"(%4, %8) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %12 = "stablehlo.subtract"(%1, %11) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %13 = "func.call"(%9, %12, %1) <{callee = @_where}> : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    "func.return"(%13) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xi1>, %arg1: tensor<4xi32>, %arg2: tensor<4xi32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    "func.return"(%0) : (tensor<4xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
