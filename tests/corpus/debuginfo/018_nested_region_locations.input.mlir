%0 = "test.outer"() ({
  %1 = "test.inner"() ({
    "test.innermost"() : () -> () loc("deep")
  }) : () -> i32 loc("mid")
  "test.yield"(%1) : (i32) -> ()
}) : () -> i32 loc("top")
"test.after"(%0) : (i32) -> ()
