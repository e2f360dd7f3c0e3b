"builtin.module"() ({
  "test.func"() ({
    "test.br"()[^bb2] : () -> ()
  ^bb1:  // pred: ^bb1
    "test.br"()[^bb1] : () -> ()
  ^bb2:  // pred: ^bb0
    "test.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
