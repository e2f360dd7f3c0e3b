func.func @a(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %x, %c0 : i32
  return %0 : i32
}
func.func @b(%x: i32) -> i32 {
  %0 = arith.muli %x, %x : i32
  %1 = arith.muli %x, %x : i32
  %2 = arith.addi %0, %1 : i32
  return %2 : i32
}
func.func private @unused_private() -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %0 = arith.addi %c1, %c2 : i32
  return %0 : i32
}
