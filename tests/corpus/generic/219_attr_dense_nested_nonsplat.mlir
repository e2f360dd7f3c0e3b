"builtin.module"() ({
  "test.op"() {a = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, b = dense<[[[1.000000e+00], [2.000000e+00]], [[3.000000e+00], [4.000000e+00]]]> : tensor<2x2x1xf32>, c = dense<[1, 2, 3]> : vector<3xi64>, d = dense<[[1.000000e-01, 2.000000e-01, 3.000000e-01]]> : tensor<1x3xf64>, e = dense<[-8, 7]> : tensor<2xi4>, f = dense<[0, 255]> : tensor<2xui8>, g = dense<[1, 2]> : tensor<2xindex>, h = dense<5> : tensor<i32>, i = dense<5> : tensor<1xi32>} : () -> ()
}) : () -> ()
