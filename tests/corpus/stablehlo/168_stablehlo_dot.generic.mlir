"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<4x5xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<4x5xf32>):
    %0 = "stablehlo.dot"(%arg0, %arg1) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %1 = "stablehlo.dot"(%arg0, %arg1) <{precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision HIGHEST>]}> : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
