"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<?x4xf32>, %arg4: tensor<4x3xf32>):
    %2 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %3 = "stablehlo.get_dimension_size"(%arg3) <{dimension = 0 : i64}> : (tensor<?x4xf32>) -> tensor<i32>
    %4 = "stablehlo.convert"(%3) : (tensor<i32>) -> tensor<i64>
    %5 = "stablehlo.compare"(%4, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.custom_call"(%5, %4) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b, 4). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details."} : (tensor<i1>, tensor<i64>) -> ()
    %6 = "func.call"(%4, %arg3, %arg4) <{callee = @_wrapped_jax_export_main}> : (tensor<i64>, tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    "func.return"(%6) : (tensor<?x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = "b"}, {}, {}], function_type = (tensor<i64>, tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "_wrapped_jax_export_main", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>, %arg2: tensor<4x3xf32>):
    %0 = "stablehlo.dot_general"(%arg1, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    %1 = "stablehlo.tanh"(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%1) : (tensor<?x3xf32>) -> ()
  }) : () -> ()
}) {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
