"builtin.module"() ({
  "test.op"() {a = dense<true> : tensor<3xi1>, b = dense<false> : tensor<2x2xi1>, c = dense<[true, false, true]> : tensor<3xi1>, d = dense<[[true], [false]]> : tensor<2x1xi1>, e = dense<true> : tensor<2xi1>} : () -> ()
}) : () -> ()
