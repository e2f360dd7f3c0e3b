func.func @constants(%x: i32) -> (i32, i32, i32, f32, f32) {
  %0 = arith.addi %x, %x : i32
  %c7 = arith.constant 7 : i32
  %1 = arith.muli %0, %c7 : i32
  %c7_again = arith.constant 7 : i32
  %2 = arith.subi %1, %c7_again : i32
  %f = arith.constant 1.5 : f32
  %g = arith.constant 1.5 : f32
  return %0, %1, %2, %f, %g : i32, i32, i32, f32, f32
}
