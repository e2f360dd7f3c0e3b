"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i32), sym_name = "ext", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{function_type = (i32) -> i32, sym_name = "callee"}> ({
  ^bb0(%arg1: i32):
    "func.return"(%arg1) : (i32) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (i32) -> i32, sym_name = "caller"}> ({
  ^bb0(%arg0: i32):
    %0 = "func.call"(%arg0) <{callee = @callee}> : (i32) -> i32
    %1:2 = "func.call"(%0) <{callee = @ext}> : (i32) -> (i32, i32)
    "func.call"() <{callee = @nothing}> : () -> ()
    "func.return"(%1#1) : (i32) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "nothing"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
