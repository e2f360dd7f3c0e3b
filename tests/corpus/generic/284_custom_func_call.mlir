"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i1), sym_name = "callee", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{function_type = (i32) -> i1, sym_name = "caller"}> ({
  ^bb0(%arg0: i32):
    %0:2 = "func.call"(%arg0) <{callee = @callee}> : (i32) -> (i32, i1)
    %1:2 = "func.call"(%0#0) <{callee = @callee}> : (i32) -> (i32, i1)
    %2 = "func.constant"() <{value = @callee}> : () -> ((i32) -> (i32, i1))
    %3:2 = "func.call_indirect"(%2, %1#0) : ((i32) -> (i32, i1), i32) -> (i32, i1)
    "func.return"(%3#1) : (i1) -> ()
  }) : () -> ()
}) : () -> ()
