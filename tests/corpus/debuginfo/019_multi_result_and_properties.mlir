"builtin.module"() ({
  %0:2 = "test.two"() <{p = 1 : i64}> {a = "x"} : () -> (i1, i2) loc(#loc1)
  "test.succ"(%0#1) ({
    "test.br"()[^bb1] : () -> () loc(#loc4)
  ^bb1:  // pred: ^bb0
    "test.end"() : () -> () loc(#loc5)
  }) : (i2) -> () loc(#loc6)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("two")
#loc2 = loc("succ")
#loc3 = loc("caller":4:2)
#loc4 = loc("br")
#loc5 = loc("-":5:3)
#loc6 = loc(callsite(#loc2 at #loc3))
