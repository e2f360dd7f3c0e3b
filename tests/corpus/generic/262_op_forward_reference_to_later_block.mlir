"builtin.module"() ({
  "test.func"() ({
    "test.br"()[^bb2] : () -> ()
  ^bb1:  // pred: ^bb2
    "test.use"(%0) : (i32) -> ()
    "test.return"() : () -> ()
  ^bb2:  // pred: ^bb0
    %0 = "test.def"() : () -> i32
    "test.br"()[^bb1] : () -> ()
  }) : () -> ()
}) : () -> ()
