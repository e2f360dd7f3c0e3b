"builtin.module"() ({
  "func.func"() <{function_type = (i1, i32) -> i32, sym_name = "branches"}> ({
  ^bb0(%arg0: i1, %arg1: i32):
    "cf.cond_br"(%arg0, %arg1)[^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (i1, i32) -> ()
  ^bb1(%0: i32):  // pred: ^bb0
    "cf.br"(%0)[^bb3] : (i32) -> ()
  ^bb2:  // pred: ^bb0
    %1 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    "cf.br"(%1)[^bb3] : (i32) -> ()
  ^bb3(%2: i32):  // 2 preds: ^bb1, ^bb2
    "func.return"(%2) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
