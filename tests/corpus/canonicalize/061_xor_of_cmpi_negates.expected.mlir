"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> (i1, i1), sym_name = "negate"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "arith.cmpi"(%arg0, %arg1) <{predicate = 5 : i64}> : (i32, i32) -> i1
    %1 = "arith.cmpi"(%arg0, %arg1) <{predicate = 1 : i64}> : (i32, i32) -> i1
    "func.return"(%0, %1) : (i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
