"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> i32, sym_name = "ints"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<nsw>}> : (i32, i32) -> i32
    %1 = "arith.subi"(%0, %arg1) <{overflowFlags = #arith.overflow<nsw, nuw>}> : (i32, i32) -> i32
    %2 = "arith.muli"(%1, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.divsi"(%2, %arg1) : (i32, i32) -> i32
    %4 = "arith.divui"(%3, %arg1) : (i32, i32) -> i32
    %5 = "arith.remsi"(%4, %arg1) : (i32, i32) -> i32
    %6 = "arith.remui"(%5, %arg1) : (i32, i32) -> i32
    %7 = "arith.andi"(%6, %arg0) : (i32, i32) -> i32
    %8 = "arith.ori"(%7, %arg0) : (i32, i32) -> i32
    %9 = "arith.xori"(%8, %arg0) : (i32, i32) -> i32
    %10 = "arith.shli"(%9, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %11 = "arith.shrsi"(%10, %arg1) : (i32, i32) -> i32
    %12 = "arith.shrui"(%11, %arg1) : (i32, i32) -> i32
    %13 = "arith.maxsi"(%12, %arg0) : (i32, i32) -> i32
    %14 = "arith.minui"(%13, %arg0) : (i32, i32) -> i32
    %15 = "arith.ceildivsi"(%14, %arg1) : (i32, i32) -> i32
    %16 = "arith.floordivsi"(%15, %arg1) : (i32, i32) -> i32
    "func.return"(%16) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
