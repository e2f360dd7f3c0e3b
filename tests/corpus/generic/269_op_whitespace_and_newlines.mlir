"builtin.module"() ({
  "test.op"() {a = 1 : i64, b = 2 : i64} : () -> ()
  %0:2 = "test.x"() : () -> (i1, i2)
  "test.y"(%0#1) : (i2) -> ()
}) : () -> ()
