"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i32, i32, i32, i32, i32, i32), sym_name = "divzero"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = -2147483648 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %3 = "arith.divsi"(%arg0, %0) : (i32, i32) -> i32
    %4 = "arith.divui"(%arg0, %0) : (i32, i32) -> i32
    %5 = "arith.remsi"(%arg0, %0) : (i32, i32) -> i32
    %6 = "arith.remui"(%arg0, %0) : (i32, i32) -> i32
    %7 = "arith.divsi"(%1, %2) : (i32, i32) -> i32
    %8 = "arith.ceildivsi"(%arg0, %0) : (i32, i32) -> i32
    %9 = "arith.floordivsi"(%1, %2) : (i32, i32) -> i32
    "func.return"(%3, %4, %5, %6, %7, %8, %9) : (i32, i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
