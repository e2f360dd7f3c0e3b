"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<?xf32>) -> tensor<2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg13: tensor<?xf32>):
    %35 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %36 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %37 = "stablehlo.constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
    %38 = "stablehlo.get_dimension_size"(%arg13) <{dimension = 0 : i64}> : (tensor<?xf32>) -> tensor<i32>
    %39 = "stablehlo.convert"(%38) : (tensor<i32>) -> tensor<i64>
    %40:2 = "func.call"(%39, %37) <{callee = @divmod}> : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %41 = "stablehlo.compare"(%40#1, %36) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %42:2 = "func.call"(%39, %37) <{callee = @divmod}> : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    "stablehlo.custom_call"(%41, %42#1) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "Input shapes do not match the polymorphic shapes specification. Division had remainder {0} when computing the value of 'n'. Using the following polymorphic shapes specifications: args[0].shape = (2*n,). Obtained dimension variables: . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details."} : (tensor<i1>, tensor<i64>) -> ()
    %43:2 = "func.call"(%39, %37) <{callee = @divmod}> : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %44 = "stablehlo.compare"(%43#0, %35) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %45:2 = "func.call"(%39, %37) <{callee = @divmod}> : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    "stablehlo.custom_call"(%44, %45#0, %39) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'n'. Using the following polymorphic shapes specifications: args[0].shape = (2*n,). Obtained dimension variables: 'n' = {0} from specification '2*n' for dimension args[0].shape[0] (= {1}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details."} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
    %46:2 = "func.call"(%39, %37) <{callee = @divmod}> : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %47 = "func.call"(%46#0, %arg13) <{callee = @_wrapped_jax_export_main}> : (tensor<i64>, tensor<?xf32>) -> tensor<2xf32>
    "func.return"(%47) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = "n"}, {}], function_type = (tensor<i64>, tensor<?xf32>) -> tensor<2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "_wrapped_jax_export_main", sym_visibility = "private"}> ({
  ^bb0(%arg9: tensor<i64>, %arg10: tensor<?xf32>):
    %27 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.constant"() <{value = dense<2> : tensor<1xi32>}> : () -> tensor<1xi32>
    %29 = "stablehlo.convert"(%arg9) : (tensor<i64>) -> tensor<i32>
    %30 = "stablehlo.reshape"(%29) : (tensor<i32>) -> tensor<1xi32>
    %31 = "stablehlo.concatenate"(%30, %28) <{dimension = 0 : i64}> : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %32 = "stablehlo.dynamic_reshape"(%arg10, %31) : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x2xf32>
    %33 = "stablehlo.reduce"(%32, %27) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
      %34 = "stablehlo.add"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%34) : (tensor<f32>) -> ()
    }) : (tensor<?x2xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%33) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = ""}, {jax.global_constant = ""}], function_type = (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>), sym_name = "divmod", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<i64>, %arg8: tensor<i64>):
    %24 = "stablehlo.convert"(%arg7) : (tensor<i64>) -> tensor<i64>
    %25 = "func.call"(%24, %arg8) <{callee = @floor_divide}> : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %26 = "func.call"(%24, %arg8) <{callee = @remainder}> : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "func.return"(%25, %26) : (tensor<i64>, tensor<i64>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = ""}, {jax.global_constant = ""}], function_type = (tensor<i64>, tensor<i64>) -> tensor<i64>, sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<i64>, %arg6: tensor<i64>):
    %13 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %14 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %15 = "stablehlo.divide"(%arg5, %arg6) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %16 = "stablehlo.sign"(%arg5) : (tensor<i64>) -> tensor<i64>
    %17 = "stablehlo.sign"(%arg6) : (tensor<i64>) -> tensor<i64>
    %18 = "stablehlo.compare"(%16, %17) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %19 = "stablehlo.remainder"(%arg5, %arg6) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %20 = "stablehlo.compare"(%19, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %21 = "stablehlo.and"(%18, %20) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %22 = "stablehlo.subtract"(%15, %13) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %23 = "func.call"(%21, %22, %15) <{callee = @_where}> : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    "func.return"(%23) : (tensor<i64>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = ""}, {jax.global_constant = ""}, {jax.global_constant = ""}], function_type = (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<i1>, %arg3: tensor<i64>, %arg4: tensor<i64>):
    %12 = "stablehlo.select"(%arg2, %arg3, %arg4) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    "func.return"(%12) : (tensor<i64>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = ""}, {jax.global_constant = ""}], function_type = (tensor<i64>, tensor<i64>) -> tensor<i64>, sym_name = "remainder", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %3 = "func.call"(%2, %0, %arg1) <{callee = @_where}> : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    %4 = "stablehlo.remainder"(%arg0, %3) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %5 = "stablehlo.compare"(%4, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %6 = "stablehlo.compare"(%4, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %7 = "stablehlo.compare"(%3, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %8 = "stablehlo.compare"(%6, %7) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %9 = "stablehlo.and"(%8, %5) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %10 = "stablehlo.add"(%4, %3) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %11 = "stablehlo.select"(%9, %10, %4) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    "func.return"(%11) : (tensor<i64>) -> ()
  }) : () -> ()
}) {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
