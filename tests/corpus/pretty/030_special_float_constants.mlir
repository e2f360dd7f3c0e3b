module {
  func.func @special() -> (f32, f32, f32, f64, f16, f64, f32) {
    %cst = arith.constant 0x7F800000 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 0x7FC00000 : f32
    %cst_2 = arith.constant 3.14159265358979 : f64
    %cst_3 = arith.constant 5.960460e-08 : f16
    %cst_4 = arith.constant 0x419D6F3454000000 : f64
    %cst_5 = arith.constant 1.000000e-10 : f32
    return %cst, %cst_0, %cst_1, %cst_2, %cst_3, %cst_4, %cst_5 : f32, f32, f32, f64, f16, f64, f32
  }
}
