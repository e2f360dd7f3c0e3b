"builtin.module"() ({
  %0 = "test.outer"() ({
    %1 = "test.inner"() ({
      "test.innermost"() : () -> () loc(#loc3)
    }) : () -> i32 loc(#loc2)
    "test.yield"(%1) : (i32) -> () loc(#loc4)
  }) : () -> i32 loc(#loc1)
  "test.after"(%0) : (i32) -> () loc(#loc5)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("top")
#loc2 = loc("mid")
#loc3 = loc("deep")
#loc4 = loc("-":5:3)
#loc5 = loc("-":7:1)
