"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg22: tensor<8xf32>, %arg23: tensor<4xf32>):
    %47 = "func.call"(%arg22, %arg23) <{callee = @searchsorted}> : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>
    "func.return"(%47) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>, sym_name = "searchsorted", sym_visibility = "private"}> ({
  ^bb0(%arg20: tensor<8xf32>, %arg21: tensor<4xf32>):
    %46 = "func.call"(%arg20, %arg21) <{callee = @_searchsorted_scan_impl}> : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>
    "func.return"(%46) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>, sym_name = "_searchsorted_scan_impl", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<8xf32>, %arg19: tensor<4xf32>):
    %45 = "func.call"(%arg18, %arg19) <{callee = @_searchsorted_scan_impl_0}> : (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>
    "func.return"(%45) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>, tensor<4xf32>) -> tensor<4xi32>, sym_name = "_searchsorted_scan_impl_0", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<8xf32>, %arg7: tensor<4xf32>):
    %33 = "stablehlo.constant"() <{value = dense<0> : tensor<ui32>}> : () -> tensor<ui32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %35 = "stablehlo.constant"() <{value = dense<8> : tensor<ui32>}> : () -> tensor<ui32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %37 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %38:5 = "stablehlo.while"(%arg6, %arg7, %37, %34, %36) ({
    ^bb0(%arg13: tensor<8xf32>, %arg14: tensor<4xf32>, %arg15: tensor<i64>, %arg16: tensor<4xui32>, %arg17: tensor<4xui32>):
      %43 = "stablehlo.constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
      %44 = "stablehlo.compare"(%arg15, %43) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%44) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<8xf32>, %arg9: tensor<4xf32>, %arg10: tensor<i64>, %arg11: tensor<4xui32>, %arg12: tensor<4xui32>):
      %40:2 = "func.call"(%arg8, %arg9, %arg11, %arg12) <{callee = @closed_call}> : (tensor<8xf32>, tensor<4xf32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>)
      %41 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %42 = "stablehlo.add"(%arg10, %41) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%arg8, %arg9, %42, %40#0, %40#1) : (tensor<8xf32>, tensor<4xf32>, tensor<i64>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<8xf32>, tensor<4xf32>, tensor<i64>, tensor<4xui32>, tensor<4xui32>) -> (tensor<8xf32>, tensor<4xf32>, tensor<i64>, tensor<4xui32>, tensor<4xui32>)
    %39 = "stablehlo.convert"(%38#4) : (tensor<4xui32>) -> tensor<4xi32>
    "func.return"(%39) : (tensor<4xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>, tensor<4xf32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<8xf32>, %arg3: tensor<4xf32>, %arg4: tensor<4xui32>, %arg5: tensor<4xui32>):
    %3 = "stablehlo.subtract"(%arg5, %arg4) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %4 = "stablehlo.constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
    %5 = "func.call"(%3, %4) <{callee = @floor_divide}> : (tensor<4xui32>, tensor<i64>) -> tensor<4xui32>
    %6 = "stablehlo.add"(%arg4, %5) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xui32>) -> tensor<4x1xui32>
    %8 = "stablehlo.gather"(%arg2, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<8xf32>, tensor<4x1xui32>) -> tensor<4x1xf32>
    %9 = "stablehlo.reshape"(%8) : (tensor<4x1xf32>) -> tensor<4xf32>
    %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %12 = "stablehlo.compare"(%arg3, %11) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %13 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %15 = "stablehlo.select"(%12, %14, %arg3) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %16 = "stablehlo.compare"(%arg3, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %17 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %19 = "stablehlo.select"(%16, %18, %15) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %20 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %22 = "stablehlo.compare"(%9, %21) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %23 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %25 = "stablehlo.select"(%22, %24, %9) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %26 = "stablehlo.compare"(%9, %9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %27 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %29 = "stablehlo.select"(%26, %28, %25) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %30 = "stablehlo.compare"(%19, %29) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %31 = "stablehlo.select"(%30, %arg4, %6) : (tensor<4xi1>, tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    %32 = "stablehlo.select"(%30, %6, %arg5) : (tensor<4xi1>, tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    "func.return"(%31, %32) : (tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xui32>, tensor<i64>) -> tensor<4xui32>, sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xui32>, %arg1: tensor<i64>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<i64>) -> tensor<ui32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
    %2 = "stablehlo.divide"(%arg0, %1) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    "func.return"(%2) : (tensor<4xui32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
