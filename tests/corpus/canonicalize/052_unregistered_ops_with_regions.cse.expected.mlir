"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "regions"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.addi"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %2 = "arith.muli"(%1, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "test.region"(%2) ({
    ^bb0(%arg1: i32):
      %4 = "arith.constant"() <{value = 0 : i32}> : () -> i32
      %5 = "arith.addi"(%arg1, %4) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
      %6 = "arith.muli"(%1, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
      %7 = "arith.muli"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
      "test.yield"(%5, %6, %7) : (i32, i32, i32) -> ()
    }) : (i32) -> i32
    "func.return"(%3) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
