"builtin.module"() ({
  "func.func"() <{function_type = (i8, i64, index, i32) -> (i32, i64, i4, index, i32, index, i32), sym_name = "int_casts"}> ({
  ^bb0(%arg0: i8, %arg1: i64, %arg2: index, %arg3: i32):
    %0 = "arith.extsi"(%arg0) : (i8) -> i32
    %1 = "arith.extui"(%arg0) : (i8) -> i64
    %2 = "arith.trunci"(%arg1) <{overflowFlags = #arith.overflow<none>}> : (i64) -> i4
    %3 = "arith.index_cast"(%arg3) : (i32) -> index
    %4 = "arith.index_cast"(%arg2) : (index) -> i32
    %5 = "arith.index_castui"(%arg3) : (i32) -> index
    %6 = "arith.trunci"(%arg1) <{overflowFlags = #arith.overflow<nsw>}> : (i64) -> i32
    "func.return"(%0, %1, %2, %3, %4, %5, %6) : (i32, i64, i4, index, i32, index, i32) -> ()
  }) : () -> ()
}) : () -> ()
