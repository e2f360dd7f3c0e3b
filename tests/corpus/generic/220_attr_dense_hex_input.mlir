"builtin.module"() ({
  "test.op"() {a = dense<[1, 2, 3, 4]> : tensor<4xi32>, b = dense<1> : tensor<4xi32>, c = dense<[1.500000e+00, 1.000000e+00]> : tensor<2xf32>, d = dense<[1, 2]> : tensor<2xi8>, e = dense<1.000000e+00> : tensor<3xf16>} : () -> ()
}) : () -> ()
