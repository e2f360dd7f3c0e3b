func.func @divzero(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %cmin = arith.constant -2147483648 : i32
  %cm1 = arith.constant -1 : i32
  %0 = arith.divsi %x, %c0 : i32
  %1 = arith.divui %x, %c0 : i32
  %2 = arith.remsi %x, %c0 : i32
  %3 = arith.remui %x, %c0 : i32
  %4 = arith.divsi %cmin, %cm1 : i32
  %5 = arith.ceildivsi %x, %c0 : i32
  %6 = arith.floordivsi %cmin, %cm1 : i32
  return %0, %1, %2, %3, %4, %5, %6 : i32, i32, i32, i32, i32, i32, i32
}
