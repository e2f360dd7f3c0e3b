"builtin.module"() <{sym_name = "m"}> ({
  "test.op"() : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("module.mlir":1:1)
#loc1 = loc("-":2:3)
