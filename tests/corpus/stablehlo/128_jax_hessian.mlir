module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<2x2xi64>
    %1 = stablehlo.iota dim = 1 : tensor<2x2xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<2x2xi64>
    %3 = stablehlo.add %0, %2 : tensor<2x2xi64>
    %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi1>
    %5 = stablehlo.convert %4 : (tensor<2x2xi1>) -> tensor<2x2xf32>
    %6 = stablehlo.slice %5 [0:2, 0:2] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %7 = stablehlo.convert %6 : tensor<2x2xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %9 = stablehlo.multiply %8, %arg0 : tensor<2xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x2xf32>) -> tensor<2x2xf32>
    %12 = stablehlo.multiply %7, %11 : tensor<2x2xf32>
    %cst_0 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %14 = stablehlo.multiply %13, %12 : tensor<2x2xf32>
    %15 = stablehlo.iota dim = 0 : tensor<1x1xi64>
    %16 = stablehlo.iota dim = 1 : tensor<1x1xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %17 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<1x1xi64>
    %18 = stablehlo.add %15, %17 : tensor<1x1xi64>
    %19 = stablehlo.compare EQ, %18, %16, SIGNED : (tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<1x1xi1>
    %20 = stablehlo.convert %19 : (tensor<1x1xi1>) -> tensor<1x1xf32>
    %21 = stablehlo.slice %20 [0:1, 0:1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %22 = stablehlo.reshape %21 : (tensor<1x1xf32>) -> tensor<1xf32>
    %23 = stablehlo.convert %22 : tensor<1xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<1xf32>) -> tensor<1x2xf32>
    %25 = stablehlo.broadcast_in_dim %14, dims = [0, 2] : (tensor<2x2xf32>) -> tensor<2x1x2xf32>
    %26 = stablehlo.broadcast_in_dim %24, dims = [1, 2] : (tensor<1x2xf32>) -> tensor<1x1x2xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 1, 2] : (tensor<1x1x2xf32>) -> tensor<2x1x2xf32>
    %28 = stablehlo.multiply %27, %25 : tensor<2x1x2xf32>
    %29 = stablehlo.slice %28 [0:2, 0:1, 0:2] : (tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %30 = stablehlo.reshape %29 : (tensor<2x1x2xf32>) -> tensor<2x2xf32>
    %31 = stablehlo.transpose %30, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %32 = stablehlo.slice %31 [0:2, 0:2] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    return %32 : tensor<2x2xf32>
  }
}
