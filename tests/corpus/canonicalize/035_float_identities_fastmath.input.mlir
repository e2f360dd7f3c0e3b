func.func @fast(%x: f32) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %0 = arith.mulf %x, %zero fastmath<nnan, nsz> : f32
  %1 = arith.subf %x, %x fastmath<fast> : f32
  return %0, %1 : f32, f32
}
