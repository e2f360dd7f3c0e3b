"builtin.module"() ({
  "test.func"() ({
  ^bb0(%arg0: i32):
    "test.switch"(%arg0, %arg0, %arg0)[^bb1, ^bb2, ^bb1] <{case_values = dense<[1, 2]> : tensor<2xi32>}> {x} : (i32, i32, i32) -> ()
  ^bb1:  // 2 preds: ^bb0, ^bb0
    "test.return"() : () -> ()
  ^bb2:  // pred: ^bb0
    "test.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
