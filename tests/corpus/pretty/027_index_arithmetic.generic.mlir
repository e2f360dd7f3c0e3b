"builtin.module"() ({
  "func.func"() <{function_type = (index, index) -> (index, index, i1, i64), sym_name = "index"}> ({
  ^bb0(%arg0: index, %arg1: index):
    %0 = "arith.constant"() <{value = 4 : index}> : () -> index
    %1 = "arith.muli"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (index, index) -> index
    %2 = "arith.addi"(%1, %arg1) <{overflowFlags = #arith.overflow<none>}> : (index, index) -> index
    %3 = "arith.remui"(%2, %0) : (index, index) -> index
    %4 = "arith.cmpi"(%3, %arg1) <{predicate = 6 : i64}> : (index, index) -> i1
    %5 = "arith.index_cast"(%3) : (index) -> i64
    "func.return"(%2, %3, %4, %5) : (index, index, i1, i64) -> ()
  }) : () -> ()
}) : () -> ()
