"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 7>, start_indices = array<i64: 0>, strides = array<i64: 2>}> : (tensor<8xf32>) -> tensor<4xf32>
    %1 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8>, start_indices = array<i64: 1>, strides = array<i64: 2>}> : (tensor<8xf32>) -> tensor<4xf32>
    %2 = "stablehlo.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.slice"(%2) <{limit_indices = array<i64: 3>, start_indices = array<i64: 0>, strides = array<i64: 2>}> : (tensor<4xf32>) -> tensor<2xf32>
    %4 = "stablehlo.slice"(%2) <{limit_indices = array<i64: 4>, start_indices = array<i64: 1>, strides = array<i64: 2>}> : (tensor<4xf32>) -> tensor<2xf32>
    %5 = "stablehlo.add"(%3, %4) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %6 = "stablehlo.slice"(%5) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 2>}> : (tensor<2xf32>) -> tensor<1xf32>
    %7 = "stablehlo.slice"(%5) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 2>}> : (tensor<2xf32>) -> tensor<1xf32>
    %8 = "stablehlo.add"(%6, %7) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %9 = "stablehlo.slice"(%8) <{limit_indices = array<i64: 0>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<1xf32>) -> tensor<0xf32>
    %10 = "stablehlo.slice"(%5) <{limit_indices = array<i64: 2>, start_indices = array<i64: 2>, strides = array<i64: 2>}> : (tensor<2xf32>) -> tensor<0xf32>
    %11 = "stablehlo.add"(%9, %10) : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
    %12 = "stablehlo.slice"(%5) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1xf32>
    %13 = "stablehlo.concatenate"(%12, %11) <{dimension = 0 : i64}> : (tensor<1xf32>, tensor<0xf32>) -> tensor<1xf32>
    %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.pad"(%13, %14) <{edge_padding_high = array<i64: 1>, edge_padding_low = array<i64: 0>, interior_padding = array<i64: 1>}> : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %16 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.pad"(%8, %16) <{edge_padding_high = array<i64: 0>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 1>}> : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %18 = "stablehlo.add"(%15, %17) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %19 = "stablehlo.slice"(%18) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1xf32>
    %20 = "stablehlo.slice"(%2) <{limit_indices = array<i64: 4>, start_indices = array<i64: 2>, strides = array<i64: 2>}> : (tensor<4xf32>) -> tensor<1xf32>
    %21 = "stablehlo.add"(%19, %20) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %22 = "stablehlo.slice"(%2) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1xf32>
    %23 = "stablehlo.concatenate"(%22, %21) <{dimension = 0 : i64}> : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %24 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %25 = "stablehlo.pad"(%23, %24) <{edge_padding_high = array<i64: 1>, edge_padding_low = array<i64: 0>, interior_padding = array<i64: 1>}> : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %26 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %27 = "stablehlo.pad"(%18, %26) <{edge_padding_high = array<i64: 0>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 1>}> : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %28 = "stablehlo.add"(%25, %27) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %29 = "stablehlo.slice"(%28) <{limit_indices = array<i64: 3>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<3xf32>
    %30 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8>, start_indices = array<i64: 2>, strides = array<i64: 2>}> : (tensor<8xf32>) -> tensor<3xf32>
    %31 = "stablehlo.add"(%29, %30) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %32 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1xf32>
    %33 = "stablehlo.concatenate"(%32, %31) <{dimension = 0 : i64}> : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
    %34 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %35 = "stablehlo.pad"(%33, %34) <{edge_padding_high = array<i64: 1>, edge_padding_low = array<i64: 0>, interior_padding = array<i64: 1>}> : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %36 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %37 = "stablehlo.pad"(%28, %36) <{edge_padding_high = array<i64: 0>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 1>}> : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %38 = "stablehlo.add"(%35, %37) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%38) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
