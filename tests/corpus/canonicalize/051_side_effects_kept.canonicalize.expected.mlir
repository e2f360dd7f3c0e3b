"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "effect", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{function_type = (i32) -> i32, sym_name = "effects"}> ({
  ^bb0(%arg0: i32):
    %0 = "func.call"(%arg0) <{callee = @effect}> : (i32) -> i32
    %1 = "func.call"(%arg0) <{callee = @effect}> : (i32) -> i32
    %2 = "test.unknown"(%arg0) : (i32) -> i32
    %3 = "test.unknown"(%arg0) : (i32) -> i32
    "test.sink"() : () -> ()
    %4 = "arith.addi"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "func.return"(%4) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
