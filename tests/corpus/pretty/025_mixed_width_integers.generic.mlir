"builtin.module"() ({
  "func.func"() <{function_type = (i1, i7, i128, i0) -> (i64, i128, i7, i0), sym_name = "widths"}> ({
  ^bb0(%arg0: i1, %arg1: i7, %arg2: i128, %arg3: i0):
    %0 = "arith.extui"(%arg0) : (i1) -> i64
    %1 = "arith.muli"(%arg2, %arg2) <{overflowFlags = #arith.overflow<none>}> : (i128, i128) -> i128
    %2 = "arith.addi"(%arg1, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i7, i7) -> i7
    "func.return"(%0, %1, %2, %arg3) : (i64, i128, i7, i0) -> ()
  }) : () -> ()
}) : () -> ()
