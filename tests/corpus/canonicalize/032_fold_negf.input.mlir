func.func @negf() -> (f32, f64, f32, f32) {
  %a = arith.constant 1.5 : f32
  %b = arith.constant -0.0 : f64
  %c = arith.constant 0x7F800000 : f32
  %0 = arith.negf %a : f32
  %1 = arith.negf %b : f64
  %2 = arith.negf %c : f32
  %3 = arith.negf %0 : f32
  return %0, %1, %2, %3 : f32, f64, f32, f32
}
