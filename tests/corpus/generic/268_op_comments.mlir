"builtin.module"() ({
  "test.op"() {a = 1 : i64} : () -> ()
  "test.op"() {b = "// not a comment"} : () -> ()
}) : () -> ()
