func.func @select_cmp(%x: i32, %y: i32) -> (i32, i32) {
  %0 = arith.cmpi eq, %x, %y : i32
  %1 = arith.select %0, %x, %y : i32
  %2 = arith.cmpi ne, %x, %y : i32
  %3 = arith.select %2, %x, %y : i32
  return %1, %3 : i32, i32
}
