func.func @nothing(%x: i32, %y: i32) -> i32 {
  %0 = arith.addi %x, %y : i32
  %1 = arith.muli %0, %y : i32
  return %1 : i32
}
