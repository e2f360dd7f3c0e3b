func.func @f(%a: f32) -> f32 {
  %0 = arith.mulf %a, %a : f32
  %1 = arith.addf %0, %a : f32
  return %1 : f32
}
func.func @g() {
  return
}
