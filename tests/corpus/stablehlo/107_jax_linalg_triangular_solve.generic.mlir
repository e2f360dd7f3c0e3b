"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<3x3xf32>, %arg3: tensor<3x2xf32>):
    %1 = "func.call"(%arg2, %arg3) <{callee = @_solve_triangular}> : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    "func.return"(%1) : (tensor<3x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>, sym_name = "_solve_triangular", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x3xf32>, %arg1: tensor<3x2xf32>):
    %0 = "stablehlo.custom_call"(%arg0, %arg1) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=3, j=3, k=3, l=2, m=3, n=2}, custom>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    "func.return"(%0) : (tensor<3x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
