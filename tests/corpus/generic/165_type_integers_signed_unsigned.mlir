"builtin.module"() ({
  %0:9 = "test.op"() : () -> (si0, si1, si8, si64, ui0, ui1, ui8, ui96, ui64)
}) : () -> ()
