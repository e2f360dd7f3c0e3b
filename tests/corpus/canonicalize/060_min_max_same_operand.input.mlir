func.func @minmax(%x: i32, %f: f32) -> (i32, i32, i32, i32, f32, f32) {
  %0 = arith.maxsi %x, %x : i32
  %1 = arith.minsi %x, %x : i32
  %2 = arith.maxui %x, %x : i32
  %3 = arith.minui %x, %x : i32
  %4 = arith.maximumf %f, %f : f32
  %5 = arith.minnumf %f, %f : f32
  return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, f32, f32
}
