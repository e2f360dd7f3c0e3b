"builtin.module"() ({
  "func.func"() <{function_type = (i1, i1) -> (i1, i1, i1, i1, i1, i1), sym_name = "bools"}> ({
  ^bb0(%arg0: i1, %arg1: i1):
    %0 = "arith.constant"() <{value = true}> : () -> i1
    %1 = "arith.constant"() <{value = false}> : () -> i1
    %2 = "arith.xori"(%arg0, %0) : (i1, i1) -> i1
    "func.return"(%arg0, %arg0, %2, %arg0, %1, %0) : (i1, i1, i1, i1, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
