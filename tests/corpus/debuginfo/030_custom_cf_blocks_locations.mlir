#loc2 = loc("c")
#loc8 = loc("merge_arg")
"builtin.module"() ({
  "func.func"() <{function_type = (i1) -> i32, sym_name = "f"}> ({
  ^bb0(%arg0: i1 loc("c")):
    "cf.cond_br"(%arg0)[^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i1) -> () loc(#loc3)
  ^bb1:  // pred: ^bb0
    %0 = "arith.constant"() <{value = 1 : i32}> : () -> i32 loc(#loc4)
    "cf.br"(%0)[^bb3] : (i32) -> () loc(#loc5)
  ^bb2:  // pred: ^bb0
    %1 = "arith.constant"() <{value = 2 : i32}> : () -> i32 loc(#loc6)
    "cf.br"(%1)[^bb3] : (i32) -> () loc(#loc7)
  ^bb3(%2: i32 loc("merge_arg")):  // 2 preds: ^bb1, ^bb2
    "func.return"(%2) : (i32) -> () loc(#loc9)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("-":1:1)
#loc3 = loc("branch")
#loc4 = loc("one")
#loc5 = loc("-":5:3)
#loc6 = loc("two")
#loc7 = loc("-":8:3)
#loc9 = loc("-":10:3)
