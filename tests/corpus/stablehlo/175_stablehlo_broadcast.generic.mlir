"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.broadcast"(%arg0) <{broadcast_sizes = array<i64: 2, 4>}> : (tensor<3xf32>) -> tensor<2x4x3xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
