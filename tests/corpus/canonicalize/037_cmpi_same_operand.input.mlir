func.func @same(%x: i32) -> (i1, i1, i1, i1, i1, i1) {
  %0 = arith.cmpi eq, %x, %x : i32
  %1 = arith.cmpi ne, %x, %x : i32
  %2 = arith.cmpi slt, %x, %x : i32
  %3 = arith.cmpi sle, %x, %x : i32
  %4 = arith.cmpi ugt, %x, %x : i32
  %5 = arith.cmpi uge, %x, %x : i32
  return %0, %1, %2, %3, %4, %5 : i1, i1, i1, i1, i1, i1
}
