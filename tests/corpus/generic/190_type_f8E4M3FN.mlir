"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 0x7F : f8E4M3FN, h1 = 0xFF : f8E4M3FN, h2 = -0.000000e+00 : f8E4M3FN, h3 = 1.953130e-03 : f8E4M3FN, h4 = 1.500000e+00 : f8E4M3FN, h5 = 2.000000e+00 : f8E4M3FN, v00 = 0.000000e+00 : f8E4M3FN, v01 = 1.000000e+00 : f8E4M3FN, v02 = 1.500000e+00 : f8E4M3FN, v03 = -2.000000e+00 : f8E4M3FN, v04 = 5.000000e-01 : f8E4M3FN, v05 = 4.000000e+00 : f8E4M3FN, v06 = 1.015630e-01 : f8E4M3FN, v07 = 3.000000e+00 : f8E4M3FN, v08 = -0.000000e+00 : f8E4M3FN} : () -> f8E4M3FN
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf8E4M3FN>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf8E4M3FN>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E4M3FN>
  %2 = "test.use"(%1) : (tensor<2xf8E4M3FN>) -> complex<f8E4M3FN>
}) : () -> ()
