func.func @negate(%x: i32, %y: i32) -> (i1, i1) {
  %true = arith.constant true
  %0 = arith.cmpi slt, %x, %y : i32
  %1 = arith.xori %0, %true : i1
  %2 = arith.cmpi eq, %x, %y : i32
  %3 = arith.xori %true, %2 : i1
  return %1, %3 : i1, i1
}
