module {
  func.func @cmpi(%arg0: i32, %arg1: i32) -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
    %0 = arith.cmpi eq, %arg0, %arg1 : i32
    %1 = arith.cmpi ne, %arg0, %arg1 : i32
    %2 = arith.cmpi slt, %arg0, %arg1 : i32
    %3 = arith.cmpi sle, %arg0, %arg1 : i32
    %4 = arith.cmpi sgt, %arg0, %arg1 : i32
    %5 = arith.cmpi sge, %arg0, %arg1 : i32
    %6 = arith.cmpi ult, %arg0, %arg1 : i32
    %7 = arith.cmpi ule, %arg0, %arg1 : i32
    %8 = arith.cmpi ugt, %arg0, %arg1 : i32
    %9 = arith.cmpi uge, %arg0, %arg1 : i32
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
  }
}
