"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "feed"}> ({
    %0 = "arith.constant"() <{value = 12 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 10 : i32}> : () -> i32
    "test.use"(%2, %1) : (i32, i32) -> ()
    "test.use"(%0) : (i32) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
