"builtin.module"() ({
  "test.op"() {a = dense_resource<blob> : tensor<2xi8>} : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("res")

{-#
  dialect_resources: {
    builtin: {
      blob: "0x010000000102"
    }
  }
#-}
