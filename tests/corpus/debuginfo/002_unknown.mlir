"builtin.module"() ({
  "test.op"() : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc(unknown)
