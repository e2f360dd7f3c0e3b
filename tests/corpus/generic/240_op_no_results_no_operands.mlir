"builtin.module"() ({
  "test.op"() : () -> ()
}) : () -> ()
