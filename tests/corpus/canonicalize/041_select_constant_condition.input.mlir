func.func @select(%x: i32, %y: i32, %c: i1) -> (i32, i32, i32, i1, i1, i1) {
  %true = arith.constant true
  %false = arith.constant false
  %0 = arith.select %true, %x, %y : i32
  %1 = arith.select %false, %x, %y : i32
  %2 = arith.select %c, %x, %x : i32
  %3 = arith.select %c, %true, %false : i1
  %4 = arith.select %c, %false, %true : i1
  %5 = arith.select %c, %c, %false : i1
  return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i1, i1, i1
}
