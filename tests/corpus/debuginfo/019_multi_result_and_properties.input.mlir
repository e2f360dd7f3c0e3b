%0:2 = "test.two"() <{p = 1}> {a = "x"} : () -> (i1, i2) loc("two")
"test.succ"(%0#1) ({
  "test.br"()[^bb1] : () -> () loc("br")
^bb1:
  "test.end"() : () -> ()
}) : (i2) -> () loc(callsite("succ" at "caller":4:2))
