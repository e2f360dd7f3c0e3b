#loc2 = loc("x")
#loc3 = loc("y":1:2)
"builtin.module"() ({
  "test.a"() {l = #loc2, m = [#loc3]} : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("op")
