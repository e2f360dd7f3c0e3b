"builtin.module"() ({
  "builtin.module"() <{sym_name = "inner"}> ({
    "builtin.module"() <{sym_name = "innermost"}> ({
      "test.op"() : () -> ()
    }) : () -> ()
  }) : () -> ()
  "builtin.module"() ({
  ^bb0:
  }) : () -> ()
  "builtin.module"() ({
  ^bb0:
  }) : () -> ()
}) : () -> ()
