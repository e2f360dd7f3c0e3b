"builtin.module"() ({
  "test.op"() <{a = 2 : i32, b = 1 : i64}> {c = "x", d} : () -> ()
  "test.op"() <{}> : () -> ()
  "test.op"() <{only}> ({
  }) : () -> ()
}) : () -> ()
