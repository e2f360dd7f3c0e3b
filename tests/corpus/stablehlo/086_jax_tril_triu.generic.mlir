"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<4x4xf32>):
    %18 = "func.call"(%arg2) <{callee = @tril}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %19 = "func.call"(%arg2) <{callee = @triu}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%18, %19) : (tensor<4x4xf32>, tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, sym_name = "tril", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<4x4xf32>):
    %9 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4x4xi64>
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<4x4xi64>
    %12 = "stablehlo.add"(%9, %11) : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi64>
    %13 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x4xi64>
    %14 = "stablehlo.compare"(%12, %13) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %17 = "stablehlo.select"(%14, %arg1, %16) : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%17) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x4xf32>) -> tensor<4x4xf32>, sym_name = "triu", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x4xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4x4xi64>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<4x4xi64>
    %3 = "stablehlo.add"(%0, %2) : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi64>
    %4 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x4xi64>
    %5 = "stablehlo.compare"(%3, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x4xf32>
    %8 = "stablehlo.select"(%5, %7, %arg0) : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "func.return"(%8) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
