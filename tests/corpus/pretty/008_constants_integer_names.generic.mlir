"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i64, i8, i1, i1, index, index, i16, i32), sym_name = "ints"}> ({
    %0 = "arith.constant"() <{value = 42 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 7 : i64}> : () -> i64
    %3 = "arith.constant"() <{value = -1 : i8}> : () -> i8
    %4 = "arith.constant"() <{value = true}> : () -> i1
    %5 = "arith.constant"() <{value = false}> : () -> i1
    %6 = "arith.constant"() <{value = 0 : index}> : () -> index
    %7 = "arith.constant"() <{value = 13 : index}> : () -> index
    %8 = "arith.constant"() <{value = 0 : i16}> : () -> i16
    %9 = "arith.constant"() <{value = 42 : i32}> : () -> i32
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8, %9) : (i32, i32, i64, i8, i1, i1, index, index, i16, i32) -> ()
  }) : () -> ()
}) : () -> ()
