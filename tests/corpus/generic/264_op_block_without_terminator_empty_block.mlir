"builtin.module"() ({
  "test.op"() ({
  ^bb0(%arg0: i32):
  }) : () -> ()
}) : () -> ()
