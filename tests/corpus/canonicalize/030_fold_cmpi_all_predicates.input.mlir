func.func @cmpi_lt() -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %a = arith.constant -1 : i32
  %b = arith.constant 1 : i32
  %r0 = arith.cmpi eq, %a, %b : i32
  %r1 = arith.cmpi ne, %a, %b : i32
  %r2 = arith.cmpi slt, %a, %b : i32
  %r3 = arith.cmpi sle, %a, %b : i32
  %r4 = arith.cmpi sgt, %a, %b : i32
  %r5 = arith.cmpi sge, %a, %b : i32
  %r6 = arith.cmpi ult, %a, %b : i32
  %r7 = arith.cmpi ule, %a, %b : i32
  %r8 = arith.cmpi ugt, %a, %b : i32
  %r9 = arith.cmpi uge, %a, %b : i32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}
func.func @cmpi_eq() -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %a = arith.constant 5 : i32
  %b = arith.constant 5 : i32
  %r0 = arith.cmpi eq, %a, %b : i32
  %r1 = arith.cmpi ne, %a, %b : i32
  %r2 = arith.cmpi slt, %a, %b : i32
  %r3 = arith.cmpi sle, %a, %b : i32
  %r4 = arith.cmpi sgt, %a, %b : i32
  %r5 = arith.cmpi sge, %a, %b : i32
  %r6 = arith.cmpi ult, %a, %b : i32
  %r7 = arith.cmpi ule, %a, %b : i32
  %r8 = arith.cmpi ugt, %a, %b : i32
  %r9 = arith.cmpi uge, %a, %b : i32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}
