"builtin.module"() ({
  %0:5 = "test.op"() : () -> (complex<f32>, complex<f64>, complex<i8>, complex<bf16>, complex<si16>)
}) : () -> ()
