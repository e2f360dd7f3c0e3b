"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "chlo.tan"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "chlo.bessel_i1e"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "chlo.conj"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "chlo.erf"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "chlo.lgamma"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "chlo.is_inf"(%arg0) : (tensor<4xf32>) -> tensor<4xi1>
    %6 = "chlo.is_neg_inf"(%arg0) : (tensor<4xf32>) -> tensor<4xi1>
    %7 = "chlo.is_pos_inf"(%arg0) : (tensor<4xf32>) -> tensor<4xi1>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
