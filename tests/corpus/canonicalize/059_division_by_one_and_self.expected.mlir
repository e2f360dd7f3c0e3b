"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i32, i32, i32, i32), sym_name = "divs"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.divsi"(%arg0, %arg0) : (i32, i32) -> i32
    "func.return"(%arg0, %0, %1, %arg0, %arg0) : (i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
