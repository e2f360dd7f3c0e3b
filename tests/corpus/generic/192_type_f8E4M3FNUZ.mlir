"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 2.400000e+02 : f8E4M3FNUZ, h1 = -2.400000e+02 : f8E4M3FNUZ, h2 = 0x80 : f8E4M3FNUZ, h3 = 9.765620e-04 : f8E4M3FNUZ, h4 = 7.500000e-01 : f8E4M3FNUZ, h5 = 1.000000e+00 : f8E4M3FNUZ, v00 = 0.000000e+00 : f8E4M3FNUZ, v01 = 1.000000e+00 : f8E4M3FNUZ, v02 = 1.500000e+00 : f8E4M3FNUZ, v03 = -2.000000e+00 : f8E4M3FNUZ, v04 = 5.000000e-01 : f8E4M3FNUZ, v05 = 4.000000e+00 : f8E4M3FNUZ, v06 = 1.015630e-01 : f8E4M3FNUZ, v07 = 3.000000e+00 : f8E4M3FNUZ, v08 = 0.000000e+00 : f8E4M3FNUZ} : () -> f8E4M3FNUZ
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf8E4M3FNUZ>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf8E4M3FNUZ>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E4M3FNUZ>
  %2 = "test.use"(%1) : (tensor<2xf8E4M3FNUZ>) -> complex<f8E4M3FNUZ>
}) : () -> ()
