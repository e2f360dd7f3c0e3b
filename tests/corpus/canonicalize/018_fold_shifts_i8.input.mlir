func.func @fold_shli() -> (i8, i8, i8, i8, i8) {
  %a0 = arith.constant 1 : i8
  %b0 = arith.constant 3 : i8
  %r0 = arith.shli %a0, %b0 : i8
  %a1 = arith.constant -128 : i8
  %b1 = arith.constant 1 : i8
  %r1 = arith.shli %a1, %b1 : i8
  %a2 = arith.constant -1 : i8
  %b2 = arith.constant 7 : i8
  %r2 = arith.shli %a2, %b2 : i8
  %a3 = arith.constant 5 : i8
  %b3 = arith.constant 8 : i8
  %r3 = arith.shli %a3, %b3 : i8
  %a4 = arith.constant 5 : i8
  %b4 = arith.constant -1 : i8
  %r4 = arith.shli %a4, %b4 : i8
  return %r0, %r1, %r2, %r3, %r4 : i8, i8, i8, i8, i8
}
func.func @fold_shrsi() -> (i8, i8, i8, i8, i8) {
  %a0 = arith.constant 1 : i8
  %b0 = arith.constant 3 : i8
  %r0 = arith.shrsi %a0, %b0 : i8
  %a1 = arith.constant -128 : i8
  %b1 = arith.constant 1 : i8
  %r1 = arith.shrsi %a1, %b1 : i8
  %a2 = arith.constant -1 : i8
  %b2 = arith.constant 7 : i8
  %r2 = arith.shrsi %a2, %b2 : i8
  %a3 = arith.constant 5 : i8
  %b3 = arith.constant 8 : i8
  %r3 = arith.shrsi %a3, %b3 : i8
  %a4 = arith.constant 5 : i8
  %b4 = arith.constant -1 : i8
  %r4 = arith.shrsi %a4, %b4 : i8
  return %r0, %r1, %r2, %r3, %r4 : i8, i8, i8, i8, i8
}
func.func @fold_shrui() -> (i8, i8, i8, i8, i8) {
  %a0 = arith.constant 1 : i8
  %b0 = arith.constant 3 : i8
  %r0 = arith.shrui %a0, %b0 : i8
  %a1 = arith.constant -128 : i8
  %b1 = arith.constant 1 : i8
  %r1 = arith.shrui %a1, %b1 : i8
  %a2 = arith.constant -1 : i8
  %b2 = arith.constant 7 : i8
  %r2 = arith.shrui %a2, %b2 : i8
  %a3 = arith.constant 5 : i8
  %b3 = arith.constant 8 : i8
  %r3 = arith.shrui %a3, %b3 : i8
  %a4 = arith.constant 5 : i8
  %b4 = arith.constant -1 : i8
  %r4 = arith.shrui %a4, %b4 : i8
  return %r0, %r1, %r2, %r3, %r4 : i8, i8, i8, i8, i8
}
