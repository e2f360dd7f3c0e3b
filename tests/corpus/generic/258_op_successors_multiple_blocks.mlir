"builtin.module"() ({
  "test.func"() ({
  ^bb0(%arg0: i32):
    %0 = "test.cond"() : () -> i1
    "test.cond_br"(%0, %arg0)[^bb1, ^bb2] : (i1, i32) -> ()
  ^bb1:  // pred: ^bb0
    "test.br"(%arg0)[^bb3] : (i32) -> ()
  ^bb2:  // pred: ^bb0
    %1 = "test.def"() : () -> i32
    "test.br"(%1)[^bb3] : (i32) -> ()
  ^bb3(%2: i32, %3: i32):  // 2 preds: ^bb1, ^bb2
    "test.return"(%2, %3) : (i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
