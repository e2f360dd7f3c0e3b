"test.op"() {a = dense_resource<blob> : tensor<2xi8>} : () -> () loc("res")
{-# dialect_resources: {builtin: {blob: "0x010000000102"}} #-}
