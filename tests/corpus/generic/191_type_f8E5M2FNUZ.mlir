"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 5.734400e+04 : f8E5M2FNUZ, h1 = -5.734400e+04 : f8E5M2FNUZ, h2 = 0x80 : f8E5M2FNUZ, h3 = 7.629390e-06 : f8E5M2FNUZ, h4 = 5.000000e-01 : f8E5M2FNUZ, h5 = 1.000000e+00 : f8E5M2FNUZ, v00 = 0.000000e+00 : f8E5M2FNUZ, v01 = 1.000000e+00 : f8E5M2FNUZ, v02 = 1.500000e+00 : f8E5M2FNUZ, v03 = -2.000000e+00 : f8E5M2FNUZ, v04 = 5.000000e-01 : f8E5M2FNUZ, v05 = 4.000000e+00 : f8E5M2FNUZ, v06 = 9.375000e-02 : f8E5M2FNUZ, v07 = 3.000000e+00 : f8E5M2FNUZ, v08 = 0.000000e+00 : f8E5M2FNUZ} : () -> f8E5M2FNUZ
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf8E5M2FNUZ>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf8E5M2FNUZ>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E5M2FNUZ>
  %2 = "test.use"(%1) : (tensor<2xf8E5M2FNUZ>) -> complex<f8E5M2FNUZ>
}) : () -> ()
