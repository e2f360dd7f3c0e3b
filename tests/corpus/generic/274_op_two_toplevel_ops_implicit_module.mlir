"builtin.module"() ({
  "test.a"() : () -> ()
  "builtin.module"() ({
  ^bb0:
  }) : () -> ()
}) : () -> ()
