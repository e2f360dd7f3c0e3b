"builtin.module"() ({
  "test.op"() {A = 10 : i64, Beta = 3 : i64, _under = 5 : i64, "a 2" = 9 : i64, a0 = 7 : i64, a1 = 6 : i64, a10 = 8 : i64, alpha = 2 : i64, beta = 4 : i64, zeta = 1 : i64} : () -> ()
}) : () -> ()
