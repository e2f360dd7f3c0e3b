"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<f32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<f32>):
    %0:2 = "chlo.scan"(%arg0, %arg1) <{dimension = 0 : i64, is_reverse = false, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %1 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%1, %1) : (tensor<f32>, tensor<f32>) -> ()
    }) : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
