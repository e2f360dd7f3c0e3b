module {
  func.func @widths(%arg0: i1, %arg1: i7, %arg2: i128, %arg3: i0) -> (i64, i128, i7, i0) {
    %0 = arith.extui %arg0 : i1 to i64
    %1 = arith.muli %arg2, %arg2 : i128
    %2 = arith.addi %arg1, %arg1 : i7
    return %0, %1, %2, %arg3 : i64, i128, i7, i0
  }
}
