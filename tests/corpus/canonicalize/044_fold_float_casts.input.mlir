func.func @float_casts() -> (f32, f64, i32, i32, f32, f16, i32, f32, f64, i8) {
  %i = arith.constant -7 : i32
  %f = arith.constant 2.75 : f32
  %d = arith.constant 0.1 : f64
  %neg = arith.constant -2.5 : f32
  %0 = arith.sitofp %i : i32 to f32
  %1 = arith.uitofp %i : i32 to f64
  %2 = arith.fptosi %f : f32 to i32
  %3 = arith.fptoui %f : f32 to i32
  %4 = arith.truncf %d : f64 to f32
  %5 = arith.truncf %d : f64 to f16
  %6 = arith.bitcast %f : f32 to i32
  %7 = arith.bitcast %6 : i32 to f32
  %8 = arith.extf %f : f32 to f64
  %9 = arith.fptoui %neg : f32 to i8
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : f32, f64, i32, i32, f32, f16, i32, f32, f64, i8
}
