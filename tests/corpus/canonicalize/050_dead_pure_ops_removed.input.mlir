func.func @dead(%x: i32, %y: f32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %x, %c1 : i32
  %1 = arith.muli %0, %0 : i32
  %2 = arith.mulf %y, %y : f32
  %3 = arith.cmpi slt, %1, %x : i32
  %4 = arith.select %3, %x, %0 : i32
  %cst = arith.constant 3.0 : f32
  return %x : i32
}
