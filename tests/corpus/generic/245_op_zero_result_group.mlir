"builtin.module"() ({
  %0 = "test.one"() : () -> i32
  "test.use"(%0) : (i32) -> ()
}) : () -> ()
