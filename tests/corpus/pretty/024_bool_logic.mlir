module {
  func.func @logic(%arg0: i1, %arg1: i1) -> (i1, i1, i1, i1) {
    %true = arith.constant true
    %0 = arith.andi %arg0, %arg1 : i1
    %1 = arith.ori %arg0, %arg1 : i1
    %2 = arith.xori %arg0, %true : i1
    %3 = arith.cmpi eq, %arg0, %arg1 : i1
    return %0, %1, %2, %3 : i1, i1, i1, i1
  }
}
