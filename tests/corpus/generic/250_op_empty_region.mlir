"builtin.module"() ({
  "test.op"() ({
  }) : () -> ()
  "test.op"() ({
  }, {
  }) : () -> ()
}) : () -> ()
