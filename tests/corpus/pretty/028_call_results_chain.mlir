module {
  func.func private @rand() -> f32
  func.func @chain() -> f32 {
    %0 = call @rand() : () -> f32
    %1 = call @rand() : () -> f32
    %2 = arith.addf %0, %1 : f32
    %3 = call @square(%2) : (f32) -> f32
    return %3 : f32
  }
  func.func @square(%arg0: f32) -> f32 {
    %0 = arith.mulf %arg0, %arg0 : f32
    return %0 : f32
  }
}
