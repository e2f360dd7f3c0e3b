func.func @divs(%x: i32) -> (i32, i32, i32, i32, i32) {
  %c1 = arith.constant 1 : i32
  %0 = arith.divui %x, %c1 : i32
  %1 = arith.remui %x, %c1 : i32
  %2 = arith.divsi %x, %x : i32
  %3 = arith.ceildivui %x, %c1 : i32
  %4 = arith.floordivsi %x, %c1 : i32
  return %0, %1, %2, %3, %4 : i32, i32, i32, i32, i32
}
