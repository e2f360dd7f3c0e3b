module @m {
  "test.op"() : () -> ()
} loc("module.mlir":1:1)
