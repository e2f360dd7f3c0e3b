func.func @folded() -> (i32, f32, i1) {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %0 = arith.muli %c2, %c3 : i32
  %1 = arith.addi %0, %0 : i32
  %f = arith.sitofp %1 : i32 to f32
  %2 = arith.cmpi sgt, %1, %c3 : i32
  return %1, %f, %2 : i32, f32, i1
}
