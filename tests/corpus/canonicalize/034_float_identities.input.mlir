func.func @fidentities(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %zero = arith.constant 0.0 : f32
  %negzero = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %0 = arith.addf %x, %negzero : f32
  %1 = arith.addf %x, %zero : f32
  %2 = arith.subf %x, %zero : f32
  %3 = arith.mulf %x, %one : f32
  %4 = arith.mulf %x, %zero : f32
  %5 = arith.divf %x, %one : f32
  %6 = arith.negf %x : f32
  %7 = arith.negf %6 : f32
  %8 = arith.subf %x, %x : f32
  %9 = arith.maximumf %x, %x : f32
  return %0, %1, %2, %3, %4, %5, %7, %8, %9 : f32, f32, f32, f32, f32, f32, f32, f32, f32
}
