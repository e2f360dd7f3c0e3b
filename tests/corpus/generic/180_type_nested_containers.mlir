"builtin.module"() ({
  %0:6 = "test.op"() : () -> (tensor<2xcomplex<f32>>, tensor<2xvector<4xf32>>, tuple<memref<2xf32>, tensor<*xi1>>, tensor<3x!foo.elem>, memref<2xvector<4xi8>>, memref<2xcomplex<f64>>)
}) : () -> ()
