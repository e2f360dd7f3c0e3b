"builtin.module"() ({
  "test.op"() {a = strided<[4, 1]>, b = strided<[?, 1], offset: ?>, c = strided<[], offset: 3>} : () -> ()
}) : () -> ()
