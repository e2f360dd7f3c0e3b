"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32, i8, index, i64, i32, i1, i16), sym_name = "int_casts"}> ({
    %0 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 255 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 44 : i8}> : () -> i8
    %3 = "arith.constant"() <{value = 300 : index}> : () -> index
    %4 = "arith.constant"() <{value = 42 : i64}> : () -> i64
    %5 = "arith.constant"() <{value = 42 : i32}> : () -> i32
    %6 = "arith.constant"() <{value = false}> : () -> i1
    %7 = "arith.constant"() <{value = 0 : i16}> : () -> i16
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7) : (i32, i32, i8, index, i64, i32, i1, i16) -> ()
  }) : () -> ()
}) : () -> ()
