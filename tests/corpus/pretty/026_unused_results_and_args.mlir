module {
  func.func @unused(%arg0: i32, %arg1: i32, %arg2: f32) {
    %0 = arith.addi %arg0, %arg1 : i32
    %1 = arith.mulf %arg2, %arg2 : f32
    %cst = arith.constant 3.000000e+00 : f32
    return
  }
}
