"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> (i32, i32, i32, i32, i1, i1), sym_name = "dups"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %1 = "arith.muli"(%0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %2 = "arith.cmpi"(%arg0, %arg1) <{predicate = 2 : i64}> : (i32, i32) -> i1
    "func.return"(%0, %0, %1, %1, %2, %2) : (i32, i32, i32, i32, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
