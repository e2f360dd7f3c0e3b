module {
  func.func @main(%arg0: tensor<4xf32>) {
    %0 = stablehlo.custom_call @foo(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @bar(%arg0) {api_version = 4 : i32, backend_config = {a = 1 : i64}, has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.custom_call @baz() {called_computations = [@foo]} : () -> ()
    return
  }
}
