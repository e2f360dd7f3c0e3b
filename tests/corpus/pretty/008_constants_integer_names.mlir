module {
  func.func @ints() -> (i32, i32, i64, i8, i1, i1, index, index, i16, i32) {
    %c42_i32 = arith.constant 42 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c7_i64 = arith.constant 7 : i64
    %c-1_i8 = arith.constant -1 : i8
    %true = arith.constant true
    %false = arith.constant false
    %c0 = arith.constant 0 : index
    %c13 = arith.constant 13 : index
    %c0_i16 = arith.constant 0 : i16
    %c42_i32_0 = arith.constant 42 : i32
    return %c42_i32, %c-1_i32, %c7_i64, %c-1_i8, %true, %false, %c0, %c13, %c0_i16, %c42_i32_0 : i32, i32, i64, i8, i1, i1, index, index, i16, i32
  }
}
