func.func @cast_chains(%a: i8, %b: i32, %c: f32) -> (i64, i8, i32, i32, f32, i64) {
  %0 = arith.extsi %a : i8 to i32
  %1 = arith.extsi %0 : i32 to i64
  %2 = arith.trunci %0 : i32 to i8
  %3 = arith.index_cast %b : i32 to index
  %4 = arith.index_cast %3 : index to i32
  %5 = arith.bitcast %c : f32 to i32
  %6 = arith.bitcast %5 : i32 to f32
  %7 = arith.extui %a : i8 to i32
  %8 = arith.extui %7 : i32 to i64
  return %1, %2, %4, %5, %6, %8 : i64, i8, i32, i32, f32, i64
}
