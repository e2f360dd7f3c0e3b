"builtin.module"() ({
  "test.op"() : () -> () loc(#loc1)
  "test.tab"() : () -> () loc(#loc2)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("-":3:5)
#loc2 = loc("-":4:2)
