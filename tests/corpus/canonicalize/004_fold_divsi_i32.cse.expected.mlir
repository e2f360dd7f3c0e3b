"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i32, i32, i32, i32), sym_name = "fold_divsi"}> ({
    %0 = "arith.constant"() <{value = 7 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %2 = "arith.divsi"(%0, %1) : (i32, i32) -> i32
    %3 = "arith.constant"() <{value = -7 : i32}> : () -> i32
    %4 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %5 = "arith.divsi"(%3, %4) : (i32, i32) -> i32
    %6 = "arith.constant"() <{value = 2147483647 : i32}> : () -> i32
    %7 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %8 = "arith.divsi"(%6, %7) : (i32, i32) -> i32
    %9 = "arith.constant"() <{value = -2147483648 : i32}> : () -> i32
    %10 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %11 = "arith.divsi"(%9, %10) : (i32, i32) -> i32
    %12 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %13 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %14 = "arith.divsi"(%12, %13) : (i32, i32) -> i32
    %15 = "arith.divsi"(%13, %13) : (i32, i32) -> i32
    "func.return"(%2, %5, %8, %11, %14, %15) : (i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
