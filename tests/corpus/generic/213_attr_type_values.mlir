"builtin.module"() ({
  "test.op"() {a = i32, b = tensor<?xf32>, c = !foo.bar, d = none, e = index, f = memref<*xf32>, g = vector<[4]xi1>, h = complex<f64>, i = tuple<>, j = [i1, f32]} : () -> ()
}) : () -> ()
