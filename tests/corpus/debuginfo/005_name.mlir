"builtin.module"() ({
  "test.op"() : () -> () loc(#loc1)
  "test.op"() : () -> () loc(#loc2)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("just a name")
#loc2 = loc("")
