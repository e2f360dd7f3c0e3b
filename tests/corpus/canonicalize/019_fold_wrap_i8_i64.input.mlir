func.func @wrap_i8() -> (i8, i8, i8) {
  %a0 = arith.constant 127 : i8
  %b0 = arith.constant 1 : i8
  %r0 = arith.addi %a0, %b0 : i8
  %a1 = arith.constant 255 : i8
  %b1 = arith.constant 1 : i8
  %r1 = arith.addi %a1, %b1 : i8
  %a2 = arith.constant -128 : i8
  %b2 = arith.constant -1 : i8
  %r2 = arith.addi %a2, %b2 : i8
  return %r0, %r1, %r2 : i8, i8, i8
}
func.func @wrap_i64() -> (i64, i64) {
  %a0 = arith.constant 9223372036854775807 : i64
  %b0 = arith.constant 2 : i64
  %r0 = arith.muli %a0, %b0 : i64
  %a1 = arith.constant 4294967296 : i64
  %b1 = arith.constant 4294967296 : i64
  %r1 = arith.muli %a1, %b1 : i64
  return %r0, %r1 : i64, i64
}
