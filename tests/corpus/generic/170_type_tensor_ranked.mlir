"builtin.module"() ({
  %0:4 = "test.op"() : () -> (tensor<f32>, tensor<4xf32>, tensor<2x3x4xi8>, tensor<1x1x1x1xi1>)
}) : () -> ()
