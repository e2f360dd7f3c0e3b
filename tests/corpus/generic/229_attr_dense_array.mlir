"builtin.module"() ({
  "test.op"() {a = array<i32: 1, 2>, b = array<f64: 1.000000e+00, 2.000000e+00>, c = array<i8>, d = array<i1: true, false>, e = array<f32: 1.500000e+00, 1.000000e-01>, f = array<i64: -1, 9223372036854775807>, g = array<i16: -1>, h = array<f64: 0x7FF8000000000000, -0.000000e+00>, i = array<i64>, j = array<f32>, k = array<i1: true>} : () -> ()
}) : () -> ()
