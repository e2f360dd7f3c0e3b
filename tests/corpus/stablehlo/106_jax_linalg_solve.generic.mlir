"builtin.module"() <{sym_name = "jit_solve"}> ({
  "func.func"() <{function_type = (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg20: tensor<3x3xf32>, %arg21: tensor<3xf32>):
    %75 = "func.call"(%arg20, %arg21) <{callee = @solve}> : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%75) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "solve", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<3x3xf32>, %arg11: tensor<3xf32>):
    %53:3 = "stablehlo.custom_call"(%arg10) <{backend_config = "", call_target_name = "lapack_sgetrf_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
    %54 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %56 = "stablehlo.subtract"(%53#1, %55) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %57 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %58 = "stablehlo.broadcast_in_dim"(%57) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %59 = "stablehlo.compare"(%53#2, %58) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %60 = "stablehlo.broadcast_in_dim"(%59) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %61 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %62 = "stablehlo.broadcast_in_dim"(%61) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %63 = "stablehlo.broadcast_in_dim"(%60) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %64 = "stablehlo.select"(%63, %53#0, %62) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %65 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3xi32>
    %66 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %67 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %68:4 = "stablehlo.while"(%56, %67, %66, %65) ({
    ^bb0(%arg16: tensor<3xi32>, %arg17: tensor<i64>, %arg18: tensor<i64>, %arg19: tensor<3xi32>):
      %73 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
      %74 = "stablehlo.compare"(%arg17, %73) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%74) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg12: tensor<3xi32>, %arg13: tensor<i64>, %arg14: tensor<i64>, %arg15: tensor<3xi32>):
      %70:2 = "func.call"(%arg12, %arg14, %arg15) <{callee = @closed_call}> : (tensor<3xi32>, tensor<i64>, tensor<3xi32>) -> (tensor<i64>, tensor<3xi32>)
      %71 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %72 = "stablehlo.add"(%arg13, %71) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%arg12, %72, %70#0, %70#1) : (tensor<3xi32>, tensor<i64>, tensor<i64>, tensor<3xi32>) -> ()
    }) : (tensor<3xi32>, tensor<i64>, tensor<i64>, tensor<3xi32>) -> (tensor<3xi32>, tensor<i64>, tensor<i64>, tensor<3xi32>)
    %69 = "func.call"(%64, %68#3, %arg11) <{callee = @_lu_solve}> : (tensor<3x3xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%69) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xi32>, tensor<i64>, tensor<3xi32>) -> (tensor<i64>, tensor<3xi32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3xi32>, %arg4: tensor<i64>, %arg5: tensor<3xi32>):
    %13 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %14 = "stablehlo.add"(%arg4, %13) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %15 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %16 = "stablehlo.compare"(%arg4, %15) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %17 = "stablehlo.convert"(%arg4) : (tensor<i64>) -> tensor<i64>
    %18 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
    %19 = "stablehlo.add"(%17, %18) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %20 = "stablehlo.select"(%16, %19, %arg4) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    %21 = "stablehlo.dynamic_slice"(%arg3, %20) <{slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<i64>) -> tensor<1xi32>
    %22 = "stablehlo.reshape"(%21) : (tensor<1xi32>) -> tensor<i32>
    %23 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %24 = "stablehlo.compare"(%arg4, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %25 = "stablehlo.convert"(%arg4) : (tensor<i64>) -> tensor<i64>
    %26 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
    %27 = "stablehlo.add"(%25, %26) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %28 = "stablehlo.select"(%24, %27, %arg4) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    %29 = "stablehlo.dynamic_slice"(%arg5, %28) <{slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<i64>) -> tensor<1xi32>
    %30 = "stablehlo.reshape"(%29) : (tensor<1xi32>) -> tensor<i32>
    %31 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %32 = "stablehlo.compare"(%22, %31) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %33 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %34 = "stablehlo.add"(%22, %33) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %35 = "stablehlo.select"(%32, %34, %22) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %36 = "stablehlo.dynamic_slice"(%arg5, %35) <{slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>
    %37 = "stablehlo.reshape"(%36) : (tensor<1xi32>) -> tensor<i32>
    %38 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %39 = "stablehlo.compare"(%arg4, %38) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %40 = "stablehlo.constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
    %41 = "stablehlo.add"(%arg4, %40) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %42 = "stablehlo.select"(%39, %41, %arg4) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    %43 = "stablehlo.convert"(%42) : (tensor<i64>) -> tensor<i32>
    %44 = "stablehlo.broadcast_in_dim"(%43) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %45 = "stablehlo.scatter"(%arg5, %44, %37) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg8: tensor<i32>, %arg9: tensor<i32>):
      "stablehlo.return"(%arg9) : (tensor<i32>) -> ()
    }) : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    %46 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %47 = "stablehlo.compare"(%22, %46) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %48 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %49 = "stablehlo.add"(%22, %48) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %50 = "stablehlo.select"(%47, %49, %22) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %51 = "stablehlo.broadcast_in_dim"(%50) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %52 = "stablehlo.scatter"(%45, %51, %30) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg6: tensor<i32>, %arg7: tensor<i32>):
      "stablehlo.return"(%arg7) : (tensor<i32>) -> ()
    }) : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    "func.return"(%14, %52) : (tensor<i64>, tensor<3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x3xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "_lu_solve", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x3xf32>, %arg1: tensor<3xi32>, %arg2: tensor<3xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xf32>) -> tensor<3x1xf32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %3 = "stablehlo.compare"(%arg1, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %6 = "stablehlo.add"(%arg1, %5) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %7 = "stablehlo.select"(%3, %6, %arg1) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xi32>) -> tensor<3x1xi32>
    %9 = "stablehlo.gather"(%0, %8) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<3x1xf32>, tensor<3x1xi32>) -> tensor<3x1xf32>
    %10 = "stablehlo.custom_call"(%arg0, %9) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 85 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=3, j=3, k=3, l=1, m=3, n=1}, custom>} : (tensor<3x3xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
    %11 = "stablehlo.custom_call"(%arg0, %10) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=3, j=3, k=3, l=1, m=3, n=1}, custom>} : (tensor<3x3xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
    %12 = "stablehlo.reshape"(%11) : (tensor<3x1xf32>) -> tensor<3xf32>
    "func.return"(%12) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
