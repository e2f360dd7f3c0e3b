func.func @chains(%x: i32) -> (i32, i32, i32, i32) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %0 = arith.addi %x, %c1 : i32
  %1 = arith.addi %0, %c2 : i32
  %2 = arith.subi %1, %c1 : i32
  %3 = arith.subi %c2, %x : i32
  %4 = arith.subi %3, %c1 : i32
  %5 = arith.muli %x, %c2 : i32
  %6 = arith.muli %5, %c2 : i32
  return %1, %2, %4, %6 : i32, i32, i32, i32
}
