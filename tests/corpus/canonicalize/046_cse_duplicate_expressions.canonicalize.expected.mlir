"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> (i32, i32, i32, i32, i1, i1), sym_name = "dups"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %1 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %2 = "arith.muli"(%0, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.muli"(%1, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %4 = "arith.cmpi"(%arg0, %arg1) <{predicate = 2 : i64}> : (i32, i32) -> i1
    %5 = "arith.cmpi"(%arg0, %arg1) <{predicate = 2 : i64}> : (i32, i32) -> i1
    "func.return"(%0, %1, %2, %3, %4, %5) : (i32, i32, i32, i32, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
