"builtin.module"() ({
  "test.op"() : () -> () loc(#loc1)
  "test.op"() : () -> () loc(#loc2)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("file.mlir":3:7)
#loc2 = loc("/abs/path/x.py":100:0)
