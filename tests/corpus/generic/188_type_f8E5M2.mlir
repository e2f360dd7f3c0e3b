"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 0x7F : f8E5M2, h1 = 0xFF : f8E5M2, h2 = -0.000000e+00 : f8E5M2, h3 = 1.525880e-05 : f8E5M2, h4 = 1.000000e+00 : f8E5M2, h5 = 2.000000e+00 : f8E5M2, v00 = 0.000000e+00 : f8E5M2, v01 = 1.000000e+00 : f8E5M2, v02 = 1.500000e+00 : f8E5M2, v03 = -2.000000e+00 : f8E5M2, v04 = 5.000000e-01 : f8E5M2, v05 = 4.000000e+00 : f8E5M2, v06 = 9.375000e-02 : f8E5M2, v07 = 3.000000e+00 : f8E5M2, v08 = -0.000000e+00 : f8E5M2} : () -> f8E5M2
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf8E5M2>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf8E5M2>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E5M2>
  %2 = "test.use"(%1) : (tensor<2xf8E5M2>) -> complex<f8E5M2>
}) : () -> ()
