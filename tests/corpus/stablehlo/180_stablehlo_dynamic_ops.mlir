module {
  func.func @main(%arg0: tensor<?x4xf32>, %arg1: tensor<2xi64>, %arg2: tensor<f32>, %arg3: tensor<i32>) {
    %0 = stablehlo.dynamic_pad %arg0, %arg2, %arg1, %arg1, %arg1 : (tensor<?x4xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
    %1 = stablehlo.real_dynamic_slice %arg0, %arg1, %arg1, %arg1 : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
    %2 = stablehlo.set_dimension_size %arg0, %arg3, dim = 0 : (tensor<?x4xf32>, tensor<i32>) -> tensor<?x4xf32>
    %3 = stablehlo.dynamic_broadcast_in_dim %arg0, %arg1, dims = [0, 1] {known_expanding_dimensions = array<i64: 0>, known_nonexpanding_dimensions = array<i64: 1>} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    return
  }
}
