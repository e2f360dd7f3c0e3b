"builtin.module"() ({
  %0 = "test.def"() : () -> i32
  %1 = "test.def"() : () -> i32
  %2 = "test.def"() : () -> i32
  %3 = "test.def"() : () -> i32
  "test.use"(%0, %1, %2, %3) : (i32, i32, i32, i32) -> ()
}) : () -> ()
