"builtin.module"() ({
  "func.func"() <{function_type = (i1, i1) -> (i1, i1, i1, i1), sym_name = "logic"}> ({
  ^bb0(%arg0: i1, %arg1: i1):
    %0 = "arith.constant"() <{value = true}> : () -> i1
    %1 = "arith.andi"(%arg0, %arg1) : (i1, i1) -> i1
    %2 = "arith.ori"(%arg0, %arg1) : (i1, i1) -> i1
    %3 = "arith.xori"(%arg0, %0) : (i1, i1) -> i1
    %4 = "arith.cmpi"(%arg0, %arg1) <{predicate = 0 : i64}> : (i1, i1) -> i1
    "func.return"(%1, %2, %3, %4) : (i1, i1, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
