"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<?xi32>) -> tensor<?xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<?xi32>):
    %14 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %15 = "stablehlo.get_dimension_size"(%arg2) <{dimension = 0 : i64}> : (tensor<?xi32>) -> tensor<i32>
    %16 = "stablehlo.convert"(%15) : (tensor<i32>) -> tensor<i64>
    %17 = "stablehlo.compare"(%16, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.custom_call"(%17, %16) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'n'. Using the following polymorphic shapes specifications: args[0].shape = (n,). Obtained dimension variables: 'n' = {0} from specification 'n' for dimension args[0].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details."} : (tensor<i1>, tensor<i64>) -> ()
    %18 = "func.call"(%16, %arg2) <{callee = @_wrapped_jax_export_main}> : (tensor<i64>, tensor<?xi32>) -> tensor<?xi32>
    "func.return"(%18) : (tensor<?xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = "n"}, {}], function_type = (tensor<i64>, tensor<?xi32>) -> tensor<?xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "_wrapped_jax_export_main", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<?xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.convert"(%arg0) : (tensor<i64>) -> tensor<i32>
    %3 = "stablehlo.reshape"(%2) : (tensor<i32>) -> tensor<1xi32>
    %4 = "stablehlo.dynamic_iota"(%3) <{iota_dimension = 0 : i64}> : (tensor<1xi32>) -> tensor<?xi32>
    %5 = "stablehlo.convert"(%arg0) : (tensor<i64>) -> tensor<i32>
    %6 = "stablehlo.reshape"(%5) : (tensor<i32>) -> tensor<1xi32>
    %7 = "stablehlo.dynamic_broadcast_in_dim"(%1, %6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>, tensor<1xi32>) -> tensor<?xi32>
    %8 = "stablehlo.multiply"(%7, %4) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %9 = "stablehlo.convert"(%arg0) : (tensor<i64>) -> tensor<i32>
    %10 = "stablehlo.reshape"(%9) : (tensor<i32>) -> tensor<1xi32>
    %11 = "stablehlo.dynamic_broadcast_in_dim"(%0, %10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>, tensor<1xi32>) -> tensor<?xi32>
    %12 = "stablehlo.add"(%11, %8) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %13 = "stablehlo.concatenate"(%arg1, %12) <{dimension = 0 : i64}> : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    "func.return"(%13) : (tensor<?xi32>) -> ()
  }) : () -> ()
}) {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
