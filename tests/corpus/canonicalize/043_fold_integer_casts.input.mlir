func.func @int_casts() -> (i32, i32, i8, index, i64, i32, i1, i16) {
  %c = arith.constant -1 : i8
  %big = arith.constant 300 : i32
  %idx = arith.constant 42 : index
  %0 = arith.extsi %c : i8 to i32
  %1 = arith.extui %c : i8 to i32
  %2 = arith.trunci %big : i32 to i8
  %3 = arith.index_cast %big : i32 to index
  %4 = arith.index_cast %idx : index to i64
  %5 = arith.index_castui %idx : index to i32
  %6 = arith.trunci %big : i32 to i1
  %7 = arith.extsi %6 : i1 to i16
  return %0, %1, %2, %3, %4, %5, %6, %7 : i32, i32, i8, index, i64, i32, i1, i16
}
