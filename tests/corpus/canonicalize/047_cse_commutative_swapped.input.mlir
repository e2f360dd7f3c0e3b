func.func @swapped(%x: i32, %y: i32) -> (i32, i32, f32, f32) {
  %0 = arith.addi %x, %y : i32
  %1 = arith.addi %y, %x : i32
  %a = arith.sitofp %x : i32 to f32
  %b = arith.sitofp %y : i32 to f32
  %2 = arith.mulf %a, %b : f32
  %3 = arith.mulf %b, %a : f32
  return %0, %1, %2, %3 : i32, i32, f32, f32
}
