func.func @fold_f64() -> (f64, f64) {
  %a0 = arith.constant 0.1 : f64
  %b0 = arith.constant 0.2 : f64
  %r0 = arith.addf %a0, %b0 : f64
  %a1 = arith.constant 1.0e308 : f64
  %b1 = arith.constant 1.0e308 : f64
  %r1 = arith.addf %a1, %b1 : f64
  return %r0, %r1 : f64, f64
}
func.func @fold_f16() -> (f16, f16) {
  %a0 = arith.constant 0.1 : f16
  %b0 = arith.constant 3.0 : f16
  %r0 = arith.mulf %a0, %b0 : f16
  %a1 = arith.constant 65504.0 : f16
  %b1 = arith.constant 2.0 : f16
  %r1 = arith.mulf %a1, %b1 : f16
  return %r0, %r1 : f16, f16
}
func.func @fold_bf16() -> (bf16) {
  %a0 = arith.constant 1.0 : bf16
  %b0 = arith.constant 0.00390625 : bf16
  %r0 = arith.subf %a0, %b0 : bf16
  return %r0 : bf16
}
