module @jit__lambda attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %c_1 = stablehlo.constant dense<2> : tensor<i64>
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
    %2:2 = call @divmod(%1, %c_1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %3 = stablehlo.compare EQ, %2#1, %c_0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %4:2 = call @divmod(%1, %c_1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    stablehlo.custom_call @shape_assertion(%3, %4#1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Division had remainder {0} when computing the value of 'n'. Using the following polymorphic shapes specifications: args[0].shape = (2*n,). Obtained dimension variables: . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
    %5:2 = call @divmod(%1, %c_1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %6 = stablehlo.compare GE, %5#0, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %7:2 = call @divmod(%1, %c_1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    stablehlo.custom_call @shape_assertion(%6, %7#0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'n'. Using the following polymorphic shapes specifications: args[0].shape = (2*n,). Obtained dimension variables: 'n' = {0} from specification '2*n' for dimension args[0].shape[0] (= {1}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
    %8:2 = call @divmod(%1, %c_1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    %9 = call @_wrapped_jax_export_main(%8#0, %arg0) : (tensor<i64>, tensor<?xf32>) -> tensor<2xf32>
    return %9 : tensor<2xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "n"}, %arg1: tensor<?xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<2> : tensor<1xi32>
    %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %3 = stablehlo.dynamic_reshape %arg1, %2 : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x2xf32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<?x2xf32>, tensor<f32>) -> tensor<2xf32>
    return %4 : tensor<2xf32>
  }
  func.func private @divmod(%arg0: tensor<i64> {jax.global_constant = ""}, %arg1: tensor<i64> {jax.global_constant = ""}) -> (tensor<i64>, tensor<i64>) {
    %0 = stablehlo.convert %arg0 : tensor<i64>
    %1 = call @floor_divide(%0, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %2 = call @remainder(%0, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    return %1, %2 : tensor<i64>, tensor<i64>
  }
  func.func private @floor_divide(%arg0: tensor<i64> {jax.global_constant = ""}, %arg1: tensor<i64> {jax.global_constant = ""}) -> tensor<i64> {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.divide %arg0, %arg1 : tensor<i64>
    %1 = stablehlo.sign %arg0 : tensor<i64>
    %2 = stablehlo.sign %arg1 : tensor<i64>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<i64>
    %5 = stablehlo.compare NE, %4, %c_0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %6 = stablehlo.and %3, %5 : tensor<i1>
    %7 = stablehlo.subtract %0, %c : tensor<i64>
    %8 = call @_where(%6, %7, %0) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    return %8 : tensor<i64>
  }
  func.func private @_where(%arg0: tensor<i1> {jax.global_constant = ""}, %arg1: tensor<i64> {jax.global_constant = ""}, %arg2: tensor<i64> {jax.global_constant = ""}) -> tensor<i64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i64>
    return %0 : tensor<i64>
  }
  func.func private @remainder(%arg0: tensor<i64> {jax.global_constant = ""}, %arg1: tensor<i64> {jax.global_constant = ""}) -> tensor<i64> {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.compare EQ, %arg1, %c_0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %1 = call @_where(%0, %c, %arg1) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    %2 = stablehlo.remainder %arg0, %1 : tensor<i64>
    %3 = stablehlo.compare NE, %2, %c_0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %4 = stablehlo.compare LT, %2, %c_0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %5 = stablehlo.compare LT, %1, %c_0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %6 = stablehlo.compare NE, %4, %5, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %7 = stablehlo.and %6, %3 : tensor<i1>
    %8 = stablehlo.add %2, %1 : tensor<i64>
    %9 = stablehlo.select %7, %8, %2 : tensor<i1>, tensor<i64>
    return %9 : tensor<i64>
  }
}
