"builtin.module"() ({
  "test.op"() : () -> () loc("inner")
}) : () -> () loc("the module")
