"builtin.module"() ({
  "test.use"(%0) : (i32) -> () loc(#loc1)
  %0 = "test.def"() : () -> i32 loc(#loc2)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("use")
#loc2 = loc("def")
