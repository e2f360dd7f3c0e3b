"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i32, i32, i32, i32), sym_name = "fold_ori"}> ({
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 7 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = -5 : i32}> : () -> i32
    %4 = "arith.constant"() <{value = 2147483647 : i32}> : () -> i32
    %5 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    "func.return"(%2, %3, %4, %5, %1, %0) : (i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
