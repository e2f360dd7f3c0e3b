"builtin.module"() ({
  "func.func"() <{function_type = () -> (tensor<2x2xi32>, tensor<f32>, tensor<0xf32>, vector<2xf64>, tensor<3xi8>), sym_name = "dense"}> ({
    %0 = "arith.constant"() <{value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
    %1 = "arith.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %2 = "arith.constant"() <{value = dense<> : tensor<0xf32>}> : () -> tensor<0xf32>
    %3 = "arith.constant"() <{value = dense<[1.000000e-01, 2.000000e-01]> : vector<2xf64>}> : () -> vector<2xf64>
    %4 = "arith.constant"() <{value = dense<-1> : tensor<3xi8>}> : () -> tensor<3xi8>
    "func.return"(%0, %1, %2, %3, %4) : (tensor<2x2xi32>, tensor<f32>, tensor<0xf32>, vector<2xf64>, tensor<3xi8>) -> ()
  }) : () -> ()
}) : () -> ()
