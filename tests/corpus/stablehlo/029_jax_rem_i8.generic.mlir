"builtin.module"() <{sym_name = "jit_remainder"}> ({
  "func.func"() <{function_type = (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4xi8>, %arg6: tensor<4xi8>):
    %21 = "func.call"(%arg5, %arg6) <{callee = @remainder}> : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    "func.return"(%21) : (tensor<4xi8>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>, sym_name = "remainder", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4xi8>, %arg4: tensor<4xi8>):
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i8>) -> tensor<4xi8>
    %3 = "stablehlo.compare"(%arg4, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %4 = "stablehlo.constant"() <{value = dense<1> : tensor<i8>}> : () -> tensor<i8>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i8>) -> tensor<4xi8>
    %6 = "func.call"(%3, %5, %arg4) <{callee = @_where}> : (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    %7 = "stablehlo.remainder"(%arg3, %6) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    %8 = "stablehlo.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i8>) -> tensor<4xi8>
    %10 = "stablehlo.compare"(%7, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<i8>) -> tensor<4xi8>
    %13 = "stablehlo.compare"(%7, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %14 = "stablehlo.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<i8>) -> tensor<4xi8>
    %16 = "stablehlo.compare"(%6, %15) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    %17 = "stablehlo.compare"(%13, %16) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %18 = "stablehlo.and"(%17, %10) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %19 = "stablehlo.add"(%7, %6) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    %20 = "stablehlo.select"(%18, %19, %7) : (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    "func.return"(%20) : (tensor<4xi8>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xi1>, %arg1: tensor<4xi8>, %arg2: tensor<4xi8>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
    "func.return"(%0) : (tensor<4xi8>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
