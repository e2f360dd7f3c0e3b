"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xi32>, tensor<4xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xi32>, %arg1: tensor<4xf32>):
    %0 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %1 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
