"builtin.module"() ({
  %0:4 = "test.many"() : () -> (i1, i2, i3, i4)
  "test.use"(%0#3) : (i4) -> ()
  %1 = "test.one"() : () -> i8
  %2:2 = "test.two"() : () -> (i8, i8)
}) : () -> ()
