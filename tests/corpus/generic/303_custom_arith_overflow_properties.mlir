"builtin.module"() ({
  "func.func"() <{function_type = (i64) -> i64, sym_name = "ov"}> ({
  ^bb0(%arg0: i64):
    %0 = "arith.addi"(%arg0, %arg0) <{overflowFlags = #arith.overflow<nuw>}> : (i64, i64) -> i64
    %1 = "arith.muli"(%0, %0) <{overflowFlags = #arith.overflow<nsw, nuw>}> : (i64, i64) -> i64
    "func.return"(%1) : (i64) -> ()
  }) : () -> ()
}) : () -> ()
