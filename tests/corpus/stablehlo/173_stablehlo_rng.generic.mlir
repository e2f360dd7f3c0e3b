"builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>, tensor<2xi64>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<2xi64>):
    %0 = "stablehlo.rng"(%arg0, %arg1, %arg2) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}> : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>
    %1 = "stablehlo.rng"(%arg0, %arg1, %arg2) <{rng_distribution = #stablehlo<rng_distribution NORMAL>}> : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
