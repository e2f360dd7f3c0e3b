module @jit__loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x2xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<3x2xf32>) -> (tensor<4x2xf32> {jax.result_info = "result[0]"}) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.tanh %0 : tensor<3x2xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x2xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<3x2xf32>
    %4 = stablehlo.subtract %1, %arg2 : tensor<3x2xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x2xf32>
    %6 = stablehlo.multiply %5, %4 : tensor<3x2xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_2 = stablehlo.constant dense<6.000000e+00> : tensor<f32>
    %7 = stablehlo.divide %cst_1, %cst_2 : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<3x2xf32>
    %9 = stablehlo.multiply %8, %6 : tensor<3x2xf32>
    %10 = stablehlo.multiply %9, %3 : tensor<3x2xf32>
    %11 = stablehlo.multiply %10, %1 : tensor<3x2xf32>
    %12 = stablehlo.add %10, %11 : tensor<3x2xf32>
    %13 = stablehlo.dot_general %12, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %14 = stablehlo.transpose %13, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
    return %14 : tensor<4x2xf32>
  }
}
