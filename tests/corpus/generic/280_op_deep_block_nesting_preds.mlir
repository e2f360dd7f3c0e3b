"builtin.module"() ({
  "test.func"() ({
    "test.br"()[^bb1] : () -> ()
  ^bb1:  // 2 preds: ^bb0, ^bb3
    "test.br"()[^bb2, ^bb3] : () -> ()
  ^bb2:  // pred: ^bb1
    "test.br"()[^bb3] : () -> ()
  ^bb3:  // 3 preds: ^bb1, ^bb2, ^bb3
    "test.br"()[^bb1, ^bb3, ^bb4] : () -> ()
  ^bb4:  // pred: ^bb3
    "test.region"() ({
      "test.br"()[^bb1] : () -> ()
    ^bb1:  // pred: ^bb0
      "test.end"() : () -> ()
    }) : () -> ()
    "test.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
