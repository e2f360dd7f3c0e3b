"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i32, i32, i32, i32), sym_name = "fold_andi"}> ({
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = -2147483648 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    "func.return"(%2, %0, %3, %1, %0, %0) : (i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
