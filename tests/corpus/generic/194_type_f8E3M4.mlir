"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 0x7F : f8E3M4, h1 = 0xFF : f8E3M4, h2 = -0.000000e+00 : f8E3M4, h3 = 1.562500e-02 : f8E3M4, h4 = 1.750000e+00 : f8E3M4, h5 = 2.000000e+00 : f8E3M4, v00 = 0.000000e+00 : f8E3M4, v01 = 1.000000e+00 : f8E3M4, v02 = 1.500000e+00 : f8E3M4, v03 = -2.000000e+00 : f8E3M4, v04 = 5.000000e-01 : f8E3M4, v05 = 4.000000e+00 : f8E3M4, v06 = 9.375000e-02 : f8E3M4, v07 = 3.000000e+00 : f8E3M4, v08 = -0.000000e+00 : f8E3M4} : () -> f8E3M4
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf8E3M4>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf8E3M4>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E3M4>
  %2 = "test.use"(%1) : (tensor<2xf8E3M4>) -> complex<f8E3M4>
}) : () -> ()
