"builtin.module"() ({
  "test.op"() {a = dense<1.500000e+00> : tensor<2x3xf32>, b = dense<1.000000e-01> : tensor<4xf64>, c = dense<-0.000000e+00> : tensor<2xf16>, d = dense<0x7FC00000> : tensor<2xf32>, e = dense<9.999220e+09> : tensor<2xbf16>, f = dense<0.000000e+00> : tensor<0xf32>} : () -> ()
}) : () -> ()
