"builtin.module"() ({
  "any_op"() : () -> ()
  "weird.op-name$x"() : () -> ()
  "a.b.c.d"() : () -> ()
}) : () -> ()
