"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<?xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<?xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
    %1 = "stablehlo.multiply"(%arg1, %arg1) {tag} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
