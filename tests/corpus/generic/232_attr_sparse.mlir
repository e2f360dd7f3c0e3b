"builtin.module"() ({
  "test.op"() {a = sparse<[[0, 0], [1, 2]], [1, 5]> : tensor<3x4xi32>, b = sparse<[[0, 1]], 1.500000e+00> : tensor<2x2xf32>, c = sparse<[0, 2], [true, false]> : tensor<4xi1>, d = sparse<1, 7> : tensor<4xi8>, e = sparse<> : tensor<2xi32>} : () -> ()
}) : () -> ()
