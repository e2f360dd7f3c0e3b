"builtin.module"() ({
  "func.func"() <{function_type = (i8, f32, index, i32) -> (i32, i64, i4, f64, i32, index, f16, f32, i32), sym_name = "casts"}> ({
  ^bb0(%arg0: i8, %arg1: f32, %arg2: index, %arg3: i32):
    %0 = "arith.extsi"(%arg0) : (i8) -> i32
    %1 = "arith.extui"(%arg0) : (i8) -> i64
    %2 = "arith.trunci"(%arg0) <{overflowFlags = #arith.overflow<none>}> : (i8) -> i4
    %3 = "arith.sitofp"(%arg0) : (i8) -> f64
    %4 = "arith.fptosi"(%arg1) : (f32) -> i32
    %5 = "arith.index_cast"(%arg3) : (i32) -> index
    %6 = "arith.truncf"(%arg1) : (f32) -> f16
    %7 = "arith.bitcast"(%arg3) : (i32) -> f32
    %8 = "arith.index_cast"(%arg2) : (index) -> i32
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8) : (i32, i64, i4, f64, i32, index, f16, f32, i32) -> ()
  }) : () -> ()
}) : () -> ()
