"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i32, i32, i32, i32), sym_name = "fold_divsi"}> ({
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = -2147483648 : i32}> : () -> i32
    %4 = "arith.constant"() <{value = 2147483647 : i32}> : () -> i32
    %5 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %6 = "arith.constant"() <{value = -3 : i32}> : () -> i32
    %7 = "arith.divsi"(%3, %2) : (i32, i32) -> i32
    %8 = "arith.divsi"(%1, %0) : (i32, i32) -> i32
    %9 = "arith.divsi"(%0, %0) : (i32, i32) -> i32
    "func.return"(%5, %6, %4, %7, %8, %9) : (i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
