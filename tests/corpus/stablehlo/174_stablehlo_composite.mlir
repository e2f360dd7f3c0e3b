module {
  func.func @main(%arg0: tensor<4xf32>) {
    %0 = stablehlo.composite "my.op" %arg0 {composite_attributes = {k = 1 : i64}, decomposition = @decomp, version = 1 : i32} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.composite "my.op" %arg0 {decomposition = @decomp} : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
  func.func private @decomp(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
