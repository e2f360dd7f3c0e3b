"builtin.module"() <{sym_name = "named"}> ({
  "test.op"() : () -> ()
}) {a.attr = "x", z.attr = 1 : i32} : () -> ()
