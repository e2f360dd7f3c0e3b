"builtin.module"() ({
  "func.func"() <{function_type = () -> (i8, i8, i8, i8, i8), sym_name = "fold_shli"}> ({
    %15 = "arith.constant"() <{value = 8 : i8}> : () -> i8
    %16 = "arith.constant"() <{value = 5 : i8}> : () -> i8
    %17 = "arith.constant"() <{value = -1 : i8}> : () -> i8
    %18 = "arith.constant"() <{value = 0 : i8}> : () -> i8
    %19 = "arith.constant"() <{value = -128 : i8}> : () -> i8
    %20 = "arith.shli"(%16, %15) <{overflowFlags = #arith.overflow<none>}> : (i8, i8) -> i8
    %21 = "arith.shli"(%16, %17) <{overflowFlags = #arith.overflow<none>}> : (i8, i8) -> i8
    "func.return"(%15, %18, %19, %20, %21) : (i8, i8, i8, i8, i8) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (i8, i8, i8, i8, i8), sym_name = "fold_shrsi"}> ({
    %8 = "arith.constant"() <{value = 8 : i8}> : () -> i8
    %9 = "arith.constant"() <{value = 5 : i8}> : () -> i8
    %10 = "arith.constant"() <{value = -1 : i8}> : () -> i8
    %11 = "arith.constant"() <{value = 0 : i8}> : () -> i8
    %12 = "arith.constant"() <{value = -64 : i8}> : () -> i8
    %13 = "arith.shrsi"(%9, %8) : (i8, i8) -> i8
    %14 = "arith.shrsi"(%9, %10) : (i8, i8) -> i8
    "func.return"(%11, %12, %10, %13, %14) : (i8, i8, i8, i8, i8) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (i8, i8, i8, i8, i8), sym_name = "fold_shrui"}> ({
    %0 = "arith.constant"() <{value = 8 : i8}> : () -> i8
    %1 = "arith.constant"() <{value = 5 : i8}> : () -> i8
    %2 = "arith.constant"() <{value = -1 : i8}> : () -> i8
    %3 = "arith.constant"() <{value = 0 : i8}> : () -> i8
    %4 = "arith.constant"() <{value = 64 : i8}> : () -> i8
    %5 = "arith.constant"() <{value = 1 : i8}> : () -> i8
    %6 = "arith.shrui"(%1, %0) : (i8, i8) -> i8
    %7 = "arith.shrui"(%1, %2) : (i8, i8) -> i8
    "func.return"(%3, %4, %5, %6, %7) : (i8, i8, i8, i8, i8) -> ()
  }) : () -> ()
}) : () -> ()
