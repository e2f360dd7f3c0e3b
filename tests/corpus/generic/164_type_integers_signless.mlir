"builtin.module"() ({
  %0:9 = "test.op"() : () -> (i0, i1, i7, i8, i16, i32, i64, i128, i1024)
}) : () -> ()
