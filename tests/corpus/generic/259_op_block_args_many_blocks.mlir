"builtin.module"() ({
  "test.func"() ({
  ^bb0(%arg0: i64, %arg1: f64):
    "test.br"()[^bb1] : () -> ()
  ^bb1:  // pred: ^bb0
    "test.br"()[^bb2] : () -> ()
  ^bb2(%0: index, %1: index):  // 2 preds: ^bb1, ^bb2
    "test.br"()[^bb2, ^bb3] : () -> ()
  ^bb3(%2: i1):  // pred: ^bb2
    "test.return"(%arg0, %0, %2) : (i64, index, i1) -> ()
  }) : () -> ()
}) : () -> ()
