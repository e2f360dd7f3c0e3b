module {
  func.func @a(%arg0: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    return %0 : i32
  }
  func.func @b(%arg0: i32, %arg1: i32) -> i32 {
    %0 = arith.muli %arg0, %arg1 : i32
    %1 = arith.muli %0, %arg1 : i32
    %2 = call @a(%1) : (i32) -> i32
    return %2 : i32
  }
  func.func @c() -> f32 {
    %cst = arith.constant 2.500000e+00 : f32
    return %cst : f32
  }
}
