module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf64> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[1.000000e+00, -2.000000e+00, 3.000000e+00]> : tensor<3xf64>
    %0 = call @polyval(%cst, %arg0) : (tensor<3xf64>, tensor<4xf32>) -> tensor<4xf64>
    return %0 : tensor<4xf64>
  }
  func.func private @polyval(%arg0: tensor<3xf64>, %arg1: tensor<4xf32>) -> tensor<4xf64> {
    %0 = stablehlo.convert %arg1 : (tensor<4xf32>) -> tensor<4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %2 = stablehlo.slice %arg0 [0:0] : (tensor<3xf64>) -> tensor<0xf64>
    %3 = stablehlo.slice %arg0 [0:3] : (tensor<3xf64>) -> tensor<3xf64>
    %4 = stablehlo.slice %3 [0:1] : (tensor<3xf64>) -> tensor<1xf64>
    %5 = stablehlo.reshape %4 : (tensor<1xf64>) -> tensor<f64>
    %6 = call @closed_call(%0, %1, %5) : (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    %7 = stablehlo.slice %3 [1:2] : (tensor<3xf64>) -> tensor<1xf64>
    %8 = stablehlo.reshape %7 : (tensor<1xf64>) -> tensor<f64>
    %9 = call @closed_call(%0, %6, %8) : (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    %10 = stablehlo.slice %3 [2:3] : (tensor<3xf64>) -> tensor<1xf64>
    %11 = stablehlo.reshape %10 : (tensor<1xf64>) -> tensor<f64>
    %12 = call @closed_call(%0, %9, %11) : (tensor<4xf64>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    return %12 : tensor<4xf64>
  }
  func.func private @closed_call(%arg0: tensor<4xf64>, %arg1: tensor<4xf64>, %arg2: tensor<f64>) -> tensor<4xf64> {
    %0 = stablehlo.multiply %arg1, %arg0 : tensor<4xf64>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %2 = stablehlo.add %0, %1 : tensor<4xf64>
    return %2 : tensor<4xf64>
  }
}
