"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = () -> (tensor<5xi64>, tensor<2x3xi32>, tensor<3x3xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xi64>
    %1 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x3xi32>
    %2 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3x3xi64>
    %3 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x3xi64>
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<3x3xi64>
    %6 = "stablehlo.add"(%2, %5) : (tensor<3x3xi64>, tensor<3x3xi64>) -> tensor<3x3xi64>
    %7 = "stablehlo.compare"(%6, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<3x3xi64>, tensor<3x3xi64>) -> tensor<3x3xi1>
    %8 = "stablehlo.convert"(%7) : (tensor<3x3xi1>) -> tensor<3x3xf32>
    "func.return"(%0, %1, %8) : (tensor<5xi64>, tensor<2x3xi32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
