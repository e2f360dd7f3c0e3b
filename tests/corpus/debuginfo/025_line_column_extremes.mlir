"builtin.module"() ({
  "test.a"() : () -> () loc(#loc1)
  "test.b"() : () -> () loc(#loc2)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("f":4294967295:4294967295)
#loc2 = loc("f":0:0)
