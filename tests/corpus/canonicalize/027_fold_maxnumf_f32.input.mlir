func.func @fold_maxnumf() -> (f32, f32, f32, f32, f32, f32, f32) {
  %a0 = arith.constant 1.5 : f32
  %b0 = arith.constant 2.25 : f32
  %r0 = arith.maxnumf %a0, %b0 : f32
  %a1 = arith.constant 1.0 : f32
  %b1 = arith.constant 0.0 : f32
  %r1 = arith.maxnumf %a1, %b1 : f32
  %a2 = arith.constant 0.0 : f32
  %b2 = arith.constant 0.0 : f32
  %r2 = arith.maxnumf %a2, %b2 : f32
  %a3 = arith.constant -1.0 : f32
  %b3 = arith.constant 0.0 : f32
  %r3 = arith.maxnumf %a3, %b3 : f32
  %a4 = arith.constant 0.1 : f32
  %b4 = arith.constant 0.2 : f32
  %r4 = arith.maxnumf %a4, %b4 : f32
  %a5 = arith.constant 0x7FC00000 : f32
  %b5 = arith.constant 1.0 : f32
  %r5 = arith.maxnumf %a5, %b5 : f32
  %a6 = arith.constant 3.0e38 : f32
  %b6 = arith.constant 3.0e38 : f32
  %r6 = arith.maxnumf %a6, %b6 : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : f32, f32, f32, f32, f32, f32, f32
}
