module {
  func.func @int_ops(%arg0: i32, %arg1: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
    %0 = arith.addi %arg0, %arg1 : i32
    %1 = arith.subi %arg0, %arg1 : i32
    %2 = arith.muli %arg0, %arg1 : i32
    %3 = arith.divsi %arg0, %arg1 : i32
    %4 = arith.divui %arg0, %arg1 : i32
    %5 = arith.remsi %arg0, %arg1 : i32
    %6 = arith.remui %arg0, %arg1 : i32
    %7 = arith.andi %arg0, %arg1 : i32
    %8 = arith.ori %arg0, %arg1 : i32
    %9 = arith.xori %arg0, %arg1 : i32
    %10 = arith.shli %arg0, %arg1 : i32
    %11 = arith.shrsi %arg0, %arg1 : i32
    %12 = arith.shrui %arg0, %arg1 : i32
    %13 = arith.maxsi %arg0, %arg1 : i32
    %14 = arith.minsi %arg0, %arg1 : i32
    %15 = arith.maxui %arg0, %arg1 : i32
    %16 = arith.minui %arg0, %arg1 : i32
    %17 = arith.ceildivsi %arg0, %arg1 : i32
    %18 = arith.floordivsi %arg0, %arg1 : i32
    %19 = arith.ceildivui %arg0, %arg1 : i32
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
  }
}
