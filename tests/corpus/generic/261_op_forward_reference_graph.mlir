"builtin.module"() ({
  "test.use"(%0, %1#1) : (i32, f32) -> ()
  %0 = "test.def"() : () -> i32
  %1:2 = "test.def2"(%0) : (i32) -> (i32, f32)
}) : () -> ()
