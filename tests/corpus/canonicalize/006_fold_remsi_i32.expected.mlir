"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i32, i32, i32, i32), sym_name = "fold_remsi"}> ({
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %4 = "arith.remsi"(%1, %0) : (i32, i32) -> i32
    %5 = "arith.remsi"(%0, %0) : (i32, i32) -> i32
    "func.return"(%2, %3, %0, %0, %4, %5) : (i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
