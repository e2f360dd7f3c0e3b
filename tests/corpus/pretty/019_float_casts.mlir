module {
  func.func @float_casts(%arg0: i32, %arg1: f32, %arg2: f64, %arg3: f16) -> (f32, f64, i32, i16, f64, f16, f32, i32, bf16) {
    %0 = arith.sitofp %arg0 : i32 to f32
    %1 = arith.uitofp %arg0 : i32 to f64
    %2 = arith.fptosi %arg1 : f32 to i32
    %3 = arith.fptoui %arg2 : f64 to i16
    %4 = arith.extf %arg1 : f32 to f64
    %5 = arith.truncf %arg2 : f64 to f16
    %6 = arith.extf %arg3 : f16 to f32
    %7 = arith.bitcast %arg1 : f32 to i32
    %8 = arith.truncf %arg1 : f32 to bf16
    return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f64, i32, i16, f64, f16, f32, i32, bf16
  }
}
