"builtin.module"() ({
  "test.op"() {a = #opaque<"foo", "bar"> : i32} : () -> ()
}) : () -> ()
