"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32), sym_name = "identities"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = -1 : i32}> : () -> i32
    %3 = "arith.addi"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %4 = "arith.muli"(%arg0, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %5 = "arith.muli"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %6 = "arith.subi"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %7 = "arith.subi"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %8 = "arith.xori"(%arg0, %arg0) : (i32, i32) -> i32
    %9 = "arith.andi"(%arg0, %arg0) : (i32, i32) -> i32
    %10 = "arith.ori"(%arg0, %arg0) : (i32, i32) -> i32
    %11 = "arith.andi"(%arg0, %0) : (i32, i32) -> i32
    %12 = "arith.ori"(%arg0, %0) : (i32, i32) -> i32
    %13 = "arith.andi"(%arg0, %2) : (i32, i32) -> i32
    %14 = "arith.ori"(%arg0, %2) : (i32, i32) -> i32
    %15 = "arith.divsi"(%arg0, %1) : (i32, i32) -> i32
    %16 = "arith.remsi"(%arg0, %1) : (i32, i32) -> i32
    %17 = "arith.shli"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "func.return"(%3, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
