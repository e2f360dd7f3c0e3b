module {
  func.func @int_casts(%arg0: i8, %arg1: i64, %arg2: index, %arg3: i32) -> (i32, i64, i4, index, i32, index, i32) {
    %0 = arith.extsi %arg0 : i8 to i32
    %1 = arith.extui %arg0 : i8 to i64
    %2 = arith.trunci %arg1 : i64 to i4
    %3 = arith.index_cast %arg3 : i32 to index
    %4 = arith.index_cast %arg2 : index to i32
    %5 = arith.index_castui %arg3 : i32 to index
    %6 = arith.trunci %arg1 overflow<nsw> : i64 to i32
    return %0, %1, %2, %3, %4, %5, %6 : i32, i64, i4, index, i32, index, i32
  }
}
