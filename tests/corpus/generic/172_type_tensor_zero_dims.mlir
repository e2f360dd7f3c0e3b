"builtin.module"() ({
  %0:3 = "test.op"() : () -> (tensor<0xf32>, tensor<3x0xi8>, tensor<0x?xf16>)
}) : () -> ()
