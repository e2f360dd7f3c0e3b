"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i1, i1, i1), sym_name = "swap"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %1 = "arith.cmpi"(%arg0, %0) <{predicate = 4 : i64}> : (i32, i32) -> i1
    %2 = "arith.cmpi"(%arg0, %0) <{predicate = 0 : i64}> : (i32, i32) -> i1
    %3 = "arith.cmpi"(%arg0, %0) <{predicate = 7 : i64}> : (i32, i32) -> i1
    "func.return"(%1, %2, %3) : (i1, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
