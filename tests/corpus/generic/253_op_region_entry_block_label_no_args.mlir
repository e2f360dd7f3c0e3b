"builtin.module"() ({
  "test.op"() ({
    "test.yield"() : () -> ()
  }) : () -> ()
}) : () -> ()
