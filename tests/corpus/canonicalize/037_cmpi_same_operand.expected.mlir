"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i1, i1, i1, i1, i1, i1), sym_name = "same"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = true}> : () -> i1
    %1 = "arith.constant"() <{value = false}> : () -> i1
    "func.return"(%0, %1, %1, %0, %1, %0) : (i1, i1, i1, i1, i1, i1) -> ()
  }) : () -> ()
}) : () -> ()
