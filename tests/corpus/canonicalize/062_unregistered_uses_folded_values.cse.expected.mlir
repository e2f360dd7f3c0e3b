"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "feed"}> ({
    %0 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 5 : i32}> : () -> i32
    %2 = "arith.muli"(%0, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "test.use"(%2, %0) : (i32, i32) -> ()
    %3 = "arith.addi"(%2, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "test.use"(%3) : (i32) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
