"builtin.module"() ({
  "test.op"() : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("the module")
#loc1 = loc("inner")
