func.func @identities(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %cm1 = arith.constant -1 : i32
  %0 = arith.addi %x, %c0 : i32
  %1 = arith.addi %c0, %x : i32
  %2 = arith.muli %x, %c1 : i32
  %3 = arith.muli %x, %c0 : i32
  %4 = arith.subi %x, %c0 : i32
  %5 = arith.subi %x, %x : i32
  %6 = arith.xori %x, %x : i32
  %7 = arith.andi %x, %x : i32
  %8 = arith.ori %x, %x : i32
  %9 = arith.andi %x, %c0 : i32
  %10 = arith.ori %x, %c0 : i32
  %11 = arith.andi %x, %cm1 : i32
  %12 = arith.ori %x, %cm1 : i32
  %13 = arith.divsi %x, %c1 : i32
  %14 = arith.remsi %x, %c1 : i32
  %15 = arith.shli %x, %c0 : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
}
