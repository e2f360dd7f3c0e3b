"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32, i1) -> (i32, i32, i32, i1, i1, i1), sym_name = "select"}> ({
  ^bb0(%arg0: i32, %arg1: i32, %arg2: i1):
    %0 = "arith.constant"() <{value = false}> : () -> i1
    %1 = "arith.constant"() <{value = true}> : () -> i1
    %2 = "arith.xori"(%arg2, %1) : (i1, i1) -> i1
    %3 = "arith.select"(%arg2, %arg2, %0) : (i1, i1, i1) -> i1
    "func.return"(%arg0, %arg1, %arg0, %arg2, %2, %3) : (i32, i32, i32, i1, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
