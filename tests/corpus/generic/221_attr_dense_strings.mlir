"builtin.module"() ({
  "test.op"() {a = dense<["a", "b\0A"]> : tensor<2x!foo.str>, b = dense<"splat"> : tensor<3x!foo.str>, c = dense<[["x", "y"], ["z", ""]]> : tensor<2x2x!foo.str>, d = dense<"0xAB"> : tensor<!foo.str>, e = dense<["\01\FF", "\C3\A9"]> : tensor<2x!foo.str>} : () -> ()
}) : () -> ()
