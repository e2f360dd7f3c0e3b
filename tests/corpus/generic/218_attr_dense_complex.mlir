"builtin.module"() ({
  "test.op"() {a = dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>, b = dense<(1.500000e+00,-5.000000e-01)> : tensor<3xcomplex<f64>>, c = dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,4.000000e+00)]> : tensor<2xcomplex<f64>>, d = dense<(1,2)> : tensor<2xcomplex<i32>>, e = dense<[(1,-1), (0,0)]> : tensor<2xcomplex<i8>>} : () -> ()
}) : () -> ()
