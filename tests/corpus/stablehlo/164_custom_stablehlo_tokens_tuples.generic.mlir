"builtin.module"() ({
  "func.func"() <{function_type = (!stablehlo.token, tensor<2xf32>) -> (!stablehlo.token, tuple<tensor<2xf32>, tensor<i32>>), sym_name = "tokens"}> ({
  ^bb0(%arg0: !stablehlo.token, %arg1: tensor<2xf32>):
    %0 = "stablehlo.after_all"(%arg0, %arg0) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
    %1 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.tuple"(%arg1, %1) : (tensor<2xf32>, tensor<i32>) -> tuple<tensor<2xf32>, tensor<i32>>
    "func.return"(%0, %2) : (!stablehlo.token, tuple<tensor<2xf32>, tensor<i32>>) -> ()
  }) : () -> ()
}) : () -> ()
