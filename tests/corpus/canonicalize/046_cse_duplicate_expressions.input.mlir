func.func @dups(%x: i32, %y: i32) -> (i32, i32, i32, i32, i1, i1) {
  %0 = arith.addi %x, %y : i32
  %1 = arith.addi %x, %y : i32
  %2 = arith.muli %0, %1 : i32
  %3 = arith.muli %1, %0 : i32
  %4 = arith.cmpi slt, %x, %y : i32
  %5 = arith.cmpi slt, %x, %y : i32
  return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, i1, i1
}
