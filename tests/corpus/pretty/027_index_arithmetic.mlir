module {
  func.func @index(%arg0: index, %arg1: index) -> (index, index, i1, i64) {
    %c4 = arith.constant 4 : index
    %0 = arith.muli %arg0, %c4 : index
    %1 = arith.addi %0, %arg1 : index
    %2 = arith.remui %1, %c4 : index
    %3 = arith.cmpi ult, %2, %arg1 : index
    %4 = arith.index_cast %2 : index to i64
    return %1, %2, %3, %4 : index, index, i1, i64
  }
}
