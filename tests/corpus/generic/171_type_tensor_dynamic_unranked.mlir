"builtin.module"() ({
  %0:4 = "test.op"() : () -> (tensor<?xf32>, tensor<?x4x?xi32>, tensor<*xf32>, tensor<*xi1>)
}) : () -> ()
