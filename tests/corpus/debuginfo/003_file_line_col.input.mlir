"test.op"() : () -> () loc("file.mlir":3:7)
"test.op"() : () -> () loc("/abs/path/x.py":100:0)
