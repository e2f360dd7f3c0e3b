"builtin.module"() ({
  "func.func"() <{function_type = () -> (i8, i8, i8), sym_name = "wrap_i8"}> ({
    %2 = "arith.constant"() <{value = -128 : i8}> : () -> i8
    %3 = "arith.constant"() <{value = 0 : i8}> : () -> i8
    %4 = "arith.constant"() <{value = 127 : i8}> : () -> i8
    "func.return"(%2, %3, %4) : (i8, i8, i8) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (i64, i64), sym_name = "wrap_i64"}> ({
    %0 = "arith.constant"() <{value = -2 : i64}> : () -> i64
    %1 = "arith.constant"() <{value = 0 : i64}> : () -> i64
    "func.return"(%0, %1) : (i64, i64) -> ()
  }) : () -> ()
}) : () -> ()
