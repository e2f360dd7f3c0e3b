"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 3.000000e+01 : f8E4M3B11FNUZ, h1 = -3.000000e+01 : f8E4M3B11FNUZ, h2 = 0x80 : f8E4M3B11FNUZ, h3 = 1.220700e-04 : f8E4M3B11FNUZ, h4 = 9.375000e-02 : f8E4M3B11FNUZ, h5 = 1.250000e-01 : f8E4M3B11FNUZ, v00 = 0.000000e+00 : f8E4M3B11FNUZ, v01 = 1.000000e+00 : f8E4M3B11FNUZ, v02 = 1.500000e+00 : f8E4M3B11FNUZ, v03 = -2.000000e+00 : f8E4M3B11FNUZ, v04 = 5.000000e-01 : f8E4M3B11FNUZ, v05 = 4.000000e+00 : f8E4M3B11FNUZ, v06 = 1.015630e-01 : f8E4M3B11FNUZ, v07 = 3.000000e+00 : f8E4M3B11FNUZ, v08 = 0.000000e+00 : f8E4M3B11FNUZ} : () -> f8E4M3B11FNUZ
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf8E4M3B11FNUZ>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf8E4M3B11FNUZ>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E4M3B11FNUZ>
  %2 = "test.use"(%1) : (tensor<2xf8E4M3B11FNUZ>) -> complex<f8E4M3B11FNUZ>
}) : () -> ()
