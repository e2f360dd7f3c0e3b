module {
  func.func @overflow(%arg0: i64, %arg1: i64) -> (i64, i64, i64, i64, i64) {
    %0 = arith.addi %arg0, %arg1 overflow<nsw> : i64
    %1 = arith.subi %arg0, %arg1 overflow<nuw> : i64
    %2 = arith.muli %arg0, %arg1 overflow<nsw, nuw> : i64
    %3 = arith.shli %arg0, %arg1 overflow<nsw> : i64
    %4 = arith.addi %arg0, %arg1 : i64
    return %0, %1, %2, %3, %4 : i64, i64, i64, i64, i64
  }
}
