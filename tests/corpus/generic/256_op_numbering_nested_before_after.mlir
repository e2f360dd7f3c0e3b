"builtin.module"() ({
  %0 = "test.first"() : () -> i32
  "test.region"() ({
    %3 = "test.inner"() : () -> i32
    "test.use"(%0, %3) : (i32, i32) -> ()
  }) : () -> ()
  %1 = "test.last"() : () -> i32
  "test.region"() ({
  ^bb0(%arg0: i32):
    %2 = "test.inner2"(%arg0, %1) : (i32, i32) -> i32
  }) : () -> ()
}) : () -> ()
