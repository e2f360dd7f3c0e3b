module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<f32>) {
    %0 = stablehlo.while(%iterArg = %arg1) : tensor<f32> attributes {tag = "w"}
    cond {
      %9 = stablehlo.compare LT, %iterArg, %iterArg : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    } do {
      stablehlo.return %iterArg : tensor<f32>
    }
    stablehlo.while()
    cond {
      %c_0 = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %c_0 : tensor<i1>
    } do {
      stablehlo.return 
    }
    %1 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.add across dimensions = [0] {tag = 1 : i32} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %arg1) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)  {
      %9 = stablehlo.add %arg3, %arg2 : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }
    %3 = stablehlo.reduce(%arg0 init: %arg1) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)  {
      %9 = stablehlo.atan2 %arg2, %arg3 : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }
    %4 = stablehlo.iota dim = 0 {tag} : tensor<4xf32>
    %c = stablehlo.constant {tag} dense<[true, false]> : tensor<2xi1>
    %cst = stablehlo.constant dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>
    %5 = stablehlo.convert %arg0 : tensor<4xf32>
    %6 = stablehlo.reverse %arg0, dims = [] : tensor<4xf32>
    %7 = stablehlo.transpose %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4xf32>
    %8 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xui32>
    %output_state, %output = stablehlo.rng_bit_generator %8, algorithm = PHILOX : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2xui32>)
    return
  }
}
