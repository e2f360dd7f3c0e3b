"builtin.module"() ({
  "func.func"() <{function_type = (i8, i32, f32) -> (i64, i8, i32, i32, f32, i64), sym_name = "cast_chains"}> ({
  ^bb0(%arg0: i8, %arg1: i32, %arg2: f32):
    %0 = "arith.extsi"(%arg0) : (i8) -> i64
    %1 = "arith.bitcast"(%arg2) : (f32) -> i32
    %2 = "arith.extui"(%arg0) : (i8) -> i64
    "func.return"(%0, %arg0, %arg1, %1, %arg2, %2) : (i64, i8, i32, i32, f32, i64) -> ()
  }) : () -> ()
}) : () -> ()
