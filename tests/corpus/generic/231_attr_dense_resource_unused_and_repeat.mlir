"builtin.module"() ({
  "test.op"() {a = dense_resource<x> : tensor<1xi8>, b = dense_resource<x> : tensor<1xi8>} : () -> ()
}) : () -> ()

{-#
  dialect_resources: {
    builtin: {
      x: "0x0100000007"
    }
  }
#-}
