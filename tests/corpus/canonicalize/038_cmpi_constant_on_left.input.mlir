func.func @swap(%x: i32) -> (i1, i1, i1) {
  %c5 = arith.constant 5 : i32
  %0 = arith.cmpi slt, %c5, %x : i32
  %1 = arith.cmpi eq, %c5, %x : i32
  %2 = arith.cmpi uge, %c5, %x : i32
  return %0, %1, %2 : i1, i1, i1
}
