func.func @fold_ceildivui() -> (i32, i32, i32, i32, i32, i32) {
  %a0 = arith.constant 7 : i32
  %b0 = arith.constant 3 : i32
  %r0 = arith.ceildivui %a0, %b0 : i32
  %a1 = arith.constant -7 : i32
  %b1 = arith.constant 2 : i32
  %r1 = arith.ceildivui %a1, %b1 : i32
  %a2 = arith.constant 2147483647 : i32
  %b2 = arith.constant 1 : i32
  %r2 = arith.ceildivui %a2, %b2 : i32
  %a3 = arith.constant -2147483648 : i32
  %b3 = arith.constant -1 : i32
  %r3 = arith.ceildivui %a3, %b3 : i32
  %a4 = arith.constant 5 : i32
  %b4 = arith.constant 0 : i32
  %r4 = arith.ceildivui %a4, %b4 : i32
  %a5 = arith.constant 0 : i32
  %b5 = arith.constant 0 : i32
  %r5 = arith.ceildivui %a5, %b5 : i32
  return %r0, %r1, %r2, %r3, %r4, %r5 : i32, i32, i32, i32, i32, i32
}
