#loc2 = loc("shared")
"builtin.module"() ({
  "test.func"() ({
  ^bb0(%arg0: i32 loc("shared"), %arg1: i32 loc("shared")):
    "test.use"(%arg0, %arg1) : (i32, i32) -> () loc(#loc2)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("-":1:1)
