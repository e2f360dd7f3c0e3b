func.func @attrs(%x: f32, %y: f32, %a: i32, %b: i32) -> (f32, f32, i32, i32, i1, i1) {
  %0 = arith.addf %x, %y : f32
  %1 = arith.addf %x, %y fastmath<fast> : f32
  %2 = arith.addi %a, %b : i32
  %3 = arith.addi %a, %b overflow<nsw> : i32
  %4 = arith.cmpi slt, %a, %b : i32
  %5 = arith.cmpi sle, %a, %b : i32
  return %0, %1, %2, %3, %4, %5 : f32, f32, i32, i32, i1, i1
}
