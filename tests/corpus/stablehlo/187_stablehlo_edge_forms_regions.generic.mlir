"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<f32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<f32>):
    %0 = "stablehlo.while"(%arg1) ({
    ^bb0(%arg9: tensor<f32>):
      %16 = "stablehlo.compare"(%arg9, %arg9) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%16) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<f32>):
      "stablehlo.return"(%arg8) : (tensor<f32>) -> ()
    }) {tag = "w"} : (tensor<f32>) -> tensor<f32>
    "stablehlo.while"() ({
      %15 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }, {
      "stablehlo.return"() : () -> ()
    }) : () -> ()
    %1 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %14 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%14) : (tensor<f32>) -> ()
    }) {tag = 1 : i32} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %13 = "stablehlo.add"(%arg5, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%13) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %12 = "stablehlo.atan2"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> {tag} : () -> tensor<4xf32>
    %5 = "stablehlo.constant"() <{value = dense<[true, false]> : tensor<2xi1>}> {tag} : () -> tensor<2xi1>
    %6 = "stablehlo.constant"() <{value = dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %7 = "stablehlo.convert"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %8 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %9 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4xf32>
    %10 = "stablehlo.bitcast_convert"(%arg0) : (tensor<4xf32>) -> tensor<4xui32>
    %11:2 = "stablehlo.rng_bit_generator"(%10) <{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}> : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2xui32>)
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
