"builtin.module"() ({
  "func.func"() <{function_type = () -> (tensor<4xi32>, vector<2xf32>, tensor<4xi1>, tensor<3xf64>), sym_name = "dense"}> ({
    %0 = "arith.constant"() <{value = dense<[4, 5, 6, 7]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %1 = "arith.constant"() <{value = dense<2.250000e+00> : vector<2xf32>}> : () -> vector<2xf32>
    %2 = "arith.constant"() <{value = dense<[false, false, false, true]> : tensor<4xi1>}> : () -> tensor<4xi1>
    %3 = "arith.constant"() <{value = dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf64>}> : () -> tensor<3xf64>
    "func.return"(%0, %1, %2, %3) : (tensor<4xi32>, vector<2xf32>, tensor<4xi1>, tensor<3xf64>) -> ()
  }) : () -> ()
}) : () -> ()
