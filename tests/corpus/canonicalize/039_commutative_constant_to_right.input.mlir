func.func @commute(%x: i32, %y: f32) -> (i32, i32, f32, i32) {
  %c3 = arith.constant 3 : i32
  %cst = arith.constant 2.0 : f32
  %0 = arith.addi %c3, %x : i32
  %1 = arith.muli %c3, %x : i32
  %2 = arith.mulf %cst, %y : f32
  %3 = arith.andi %c3, %x : i32
  return %0, %1, %2, %3 : i32, i32, f32, i32
}
