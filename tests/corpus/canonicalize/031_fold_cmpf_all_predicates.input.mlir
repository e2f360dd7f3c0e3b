func.func @cmpf_lt() -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  %r0 = arith.cmpf false, %a, %b : f32
  %r1 = arith.cmpf oeq, %a, %b : f32
  %r2 = arith.cmpf ogt, %a, %b : f32
  %r3 = arith.cmpf oge, %a, %b : f32
  %r4 = arith.cmpf olt, %a, %b : f32
  %r5 = arith.cmpf ole, %a, %b : f32
  %r6 = arith.cmpf one, %a, %b : f32
  %r7 = arith.cmpf ord, %a, %b : f32
  %r8 = arith.cmpf ueq, %a, %b : f32
  %r9 = arith.cmpf ugt, %a, %b : f32
  %r10 = arith.cmpf uge, %a, %b : f32
  %r11 = arith.cmpf ult, %a, %b : f32
  %r12 = arith.cmpf ule, %a, %b : f32
  %r13 = arith.cmpf une, %a, %b : f32
  %r14 = arith.cmpf uno, %a, %b : f32
  %r15 = arith.cmpf true, %a, %b : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}
func.func @cmpf_nan() -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %a = arith.constant 0x7FC00000 : f32
  %b = arith.constant 2.0 : f32
  %r0 = arith.cmpf false, %a, %b : f32
  %r1 = arith.cmpf oeq, %a, %b : f32
  %r2 = arith.cmpf ogt, %a, %b : f32
  %r3 = arith.cmpf oge, %a, %b : f32
  %r4 = arith.cmpf olt, %a, %b : f32
  %r5 = arith.cmpf ole, %a, %b : f32
  %r6 = arith.cmpf one, %a, %b : f32
  %r7 = arith.cmpf ord, %a, %b : f32
  %r8 = arith.cmpf ueq, %a, %b : f32
  %r9 = arith.cmpf ugt, %a, %b : f32
  %r10 = arith.cmpf uge, %a, %b : f32
  %r11 = arith.cmpf ult, %a, %b : f32
  %r12 = arith.cmpf ule, %a, %b : f32
  %r13 = arith.cmpf une, %a, %b : f32
  %r14 = arith.cmpf uno, %a, %b : f32
  %r15 = arith.cmpf true, %a, %b : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}
