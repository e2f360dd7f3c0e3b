"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "regions"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.muli"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %1 = "test.region"(%0) ({
    ^bb0(%arg1: i32):
      %2 = "arith.muli"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
      "test.yield"(%arg1, %2, %2) : (i32, i32, i32) -> ()
    }) : (i32) -> i32
    "func.return"(%1) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
