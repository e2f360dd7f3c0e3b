"builtin.module"() ({
  "test.a"() : () -> () loc(#loc1)
  "test.b"() : () -> () loc(#loc2)
  %0 = "test.c"() : () -> i32 loc(#loc3)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("-":1:1)
#loc2 = loc("-":2:3)
#loc3 = loc("-":3:6)
