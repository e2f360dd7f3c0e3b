"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i32, i32, i32), sym_name = "chains"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 4 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %3 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %4 = "arith.addi"(%arg0, %3) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %5 = "arith.addi"(%arg0, %2) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %6 = "arith.subi"(%1, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %7 = "arith.muli"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "func.return"(%4, %5, %6, %7) : (i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
