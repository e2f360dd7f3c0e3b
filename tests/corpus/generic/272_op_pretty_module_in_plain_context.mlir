"builtin.module"() <{sym_name = "pretty"}> ({
  "test.op"() : () -> ()
}) {foo.bar = 1 : i32, foo.baz} : () -> ()
