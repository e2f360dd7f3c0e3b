"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 6.000000e+00 : f4E2M1FN, h1 = -0.000000e+00 : f4E2M1FN, h2 = 5.000000e-01 : f4E2M1FN, h3 = -6.000000e+00 : f4E2M1FN, v00 = 0.000000e+00 : f4E2M1FN, v01 = 1.000000e+00 : f4E2M1FN, v02 = 1.500000e+00 : f4E2M1FN, v03 = -2.000000e+00 : f4E2M1FN, v04 = 5.000000e-01 : f4E2M1FN, v05 = 4.000000e+00 : f4E2M1FN, v06 = 0.000000e+00 : f4E2M1FN, v07 = 3.000000e+00 : f4E2M1FN, v08 = -0.000000e+00 : f4E2M1FN} : () -> f4E2M1FN
  "test.float_dense"() {splat = dense<1.500000e+00> : tensor<2xf4E2M1FN>, values = dense<[0.000000e+00, 1.000000e+00, -1.500000e+00, 0.000000e+00]> : tensor<4xf4E2M1FN>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf4E2M1FN>
  %2 = "test.use"(%1) : (tensor<2xf4E2M1FN>) -> complex<f4E2M1FN>
}) : () -> ()
