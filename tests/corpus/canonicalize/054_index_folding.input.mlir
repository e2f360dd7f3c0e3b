func.func @index(%i: index) -> (index, index, index, i1) {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %0 = arith.muli %c4, %c8 : index
  %1 = arith.divui %c8, %c4 : index
  %2 = arith.addi %i, %0 : index
  %3 = arith.cmpi ult, %c4, %c8 : index
  return %0, %1, %2, %3 : index, index, index, i1
}
