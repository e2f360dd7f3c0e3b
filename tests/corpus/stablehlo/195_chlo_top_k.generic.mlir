"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3x8xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3x8xf32>):
    %0:2 = "chlo.top_k"(%arg0) <{k = 3 : i64}> : (tensor<3x8xf32>) -> (tensor<3x3xf32>, tensor<3x3xi32>)
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
