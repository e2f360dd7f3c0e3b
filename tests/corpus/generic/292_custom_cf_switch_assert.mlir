"builtin.module"() ({
  "func.func"() <{function_type = (i32, i1) -> (), sym_name = "switch"}> ({
  ^bb0(%arg0: i32, %arg1: i1):
    "cf.assert"(%arg1) <{msg = "must hold \22really\22"}> : (i1) -> ()
    "cf.switch"(%arg0)[^bb1, ^bb2, ^bb1] <{case_operand_segments = array<i32: 0, 0>, case_values = dense<[42, -7]> : vector<2xi32>, operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> ()
  ^bb1:  // 2 preds: ^bb0, ^bb0
    "func.return"() : () -> ()
  ^bb2:  // pred: ^bb0
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
