"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32, i1) -> (i32, i32, i32, i1, i1, i1), sym_name = "select"}> ({
  ^bb0(%arg0: i32, %arg1: i32, %arg2: i1):
    %0 = "arith.constant"() <{value = true}> : () -> i1
    %1 = "arith.constant"() <{value = false}> : () -> i1
    %2 = "arith.select"(%0, %arg0, %arg1) : (i1, i32, i32) -> i32
    %3 = "arith.select"(%1, %arg0, %arg1) : (i1, i32, i32) -> i32
    %4 = "arith.select"(%arg2, %arg0, %arg0) : (i1, i32, i32) -> i32
    %5 = "arith.select"(%arg2, %0, %1) : (i1, i1, i1) -> i1
    %6 = "arith.select"(%arg2, %1, %0) : (i1, i1, i1) -> i1
    %7 = "arith.select"(%arg2, %arg2, %1) : (i1, i1, i1) -> i1
    "func.return"(%2, %3, %4, %5, %6, %7) : (i32, i32, i32, i1, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
