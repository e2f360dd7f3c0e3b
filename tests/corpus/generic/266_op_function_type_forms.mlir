"builtin.module"() ({
  %0 = "test.one"() : () -> i32
  %1 = "test.two"(%0) : (i32) -> ((i32) -> i32)
  "test.three"(%1) : ((i32) -> i32) -> ()
  %2:2 = "test.four"(%0, %0) : (i32, i32) -> (i32, i32)
}) : () -> ()
