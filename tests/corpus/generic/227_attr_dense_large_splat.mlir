"builtin.module"() ({
  "test.op"() {a = dense<2> : tensor<1000x1000xi8>, b = dense<5.000000e-01> : tensor<512xf32>} : () -> ()
}) : () -> ()
