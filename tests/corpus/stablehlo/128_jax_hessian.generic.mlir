"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2x2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<2x2xi64>
    %1 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x2xi64>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<2x2xi64>
    %4 = "stablehlo.add"(%0, %3) : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
    %5 = "stablehlo.compare"(%4, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi1>
    %6 = "stablehlo.convert"(%5) : (tensor<2x2xi1>) -> tensor<2x2xf32>
    %7 = "stablehlo.slice"(%6) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %8 = "stablehlo.convert"(%7) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %9 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2xf32>
    %11 = "stablehlo.multiply"(%10, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1x2xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x2xf32>) -> tensor<2x2xf32>
    %14 = "stablehlo.multiply"(%8, %13) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %15 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x2xf32>
    %17 = "stablehlo.multiply"(%16, %14) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %18 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<1x1xi64>
    %19 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<1x1xi64>
    %20 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<i64>) -> tensor<1x1xi64>
    %22 = "stablehlo.add"(%18, %21) : (tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<1x1xi64>
    %23 = "stablehlo.compare"(%22, %19) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<1x1xi1>
    %24 = "stablehlo.convert"(%23) : (tensor<1x1xi1>) -> tensor<1x1xf32>
    %25 = "stablehlo.slice"(%24) <{limit_indices = array<i64: 1, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %26 = "stablehlo.reshape"(%25) : (tensor<1x1xf32>) -> tensor<1xf32>
    %27 = "stablehlo.convert"(%26) : (tensor<1xf32>) -> tensor<1xf32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<1x2xf32>
    %29 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x2xf32>) -> tensor<2x1x2xf32>
    %30 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<1x2xf32>) -> tensor<1x1x2xf32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
    %32 = "stablehlo.multiply"(%31, %29) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %33 = "stablehlo.slice"(%32) <{limit_indices = array<i64: 2, 1, 2>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %34 = "stablehlo.reshape"(%33) : (tensor<2x1x2xf32>) -> tensor<2x2xf32>
    %35 = "stablehlo.transpose"(%34) <{permutation = array<i64: 1, 0>}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %36 = "stablehlo.slice"(%35) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
    "func.return"(%36) : (tensor<2x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
