"builtin.module"() ({
  %0 = "test.def"() : () -> i32
  %1 = "test.def"() : () -> f32
  %2 = "test.use"(%0, %1, %0) : (i32, f32, i32) -> i64
  "test.use"(%2) : (i64) -> ()
}) : () -> ()
