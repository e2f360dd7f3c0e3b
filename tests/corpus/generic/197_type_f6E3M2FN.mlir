"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 2.800000e+01 : f6E3M2FN, h1 = -0.000000e+00 : f6E3M2FN, h2 = 6.250000e-02 : f6E3M2FN, h3 = -2.800000e+01 : f6E3M2FN, v00 = 0.000000e+00 : f6E3M2FN, v01 = 1.000000e+00 : f6E3M2FN, v02 = 1.500000e+00 : f6E3M2FN, v03 = -2.000000e+00 : f6E3M2FN, v04 = 5.000000e-01 : f6E3M2FN, v05 = 4.000000e+00 : f6E3M2FN, v06 = 1.250000e-01 : f6E3M2FN, v07 = 3.000000e+00 : f6E3M2FN, v08 = -0.000000e+00 : f6E3M2FN} : () -> f6E3M2FN
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf6E3M2FN>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 2.500000e-01]> : tensor<4xf6E3M2FN>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf6E3M2FN>
  %2 = "test.use"(%1) : (tensor<2xf6E3M2FN>) -> complex<f6E3M2FN>
}) : () -> ()
