"builtin.module"() ({
  %0 = "test.float_attrs"() {h0 = 1.000000e+00 : f8E8M0FNU, h1 = 0xFF : f8E8M0FNU, h2 = 2.000000e+00 : f8E8M0FNU, h3 = 1.175490e-38 : f8E8M0FNU, h4 = 6.776260e-21 : f8E8M0FNU, h5 = 1.084200e-19 : f8E8M0FNU, v00 = 1.000000e+00 : f8E8M0FNU, v01 = 5.000000e-01 : f8E8M0FNU, v02 = 4.000000e+00 : f8E8M0FNU, v03 = 1.250000e-01 : f8E8M0FNU, v04 = 4.000000e+00 : f8E8M0FNU} : () -> f8E8M0FNU
  "test.float_dense"() {splat = dense<2.000000e+00> : tensor<2xf8E8M0FNU>, values = dense<[5.877470e-39, 1.000000e+00, 2.000000e+00, 2.500000e-01]> : tensor<4xf8E8M0FNU>} : () -> ()
  %1 = "test.float_value"() : () -> tensor<2xf8E8M0FNU>
  %2 = "test.use"(%1) : (tensor<2xf8E8M0FNU>) -> complex<f8E8M0FNU>
}) : () -> ()
