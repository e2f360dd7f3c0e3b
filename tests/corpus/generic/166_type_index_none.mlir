"builtin.module"() ({
  %0 = "test.op"(%1) : (index) -> none
  %1 = "test.def"() : () -> index
}) : () -> ()
