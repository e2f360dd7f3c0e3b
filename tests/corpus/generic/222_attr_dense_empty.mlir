"builtin.module"() ({
  "test.op"() {a = dense<> : tensor<0xi32>, b = dense<> : tensor<2x0xf32>, c = dense<> : tensor<0xi8>, d = dense<> : tensor<2x0xi1>} : () -> ()
}) : () -> ()
