"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i32, i32, i32, i32), sym_name = "fold_subi"}> ({
    %0 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 4 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = -9 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = 2147483646 : i32}> : () -> i32
    %4 = "arith.constant"() <{value = -2147483647 : i32}> : () -> i32
    %5 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    "func.return"(%1, %2, %3, %4, %0, %5) : (i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
