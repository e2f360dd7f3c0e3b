"builtin.module"() ({
  "test.op"() {a = 16 : i32, b = -1 : i8, c = 2147483647 : i32, d = -1 : i64, e = 0 : index, f = -16 : i32} : () -> ()
}) : () -> ()
