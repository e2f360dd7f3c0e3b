"builtin.module"() ({
  "func.func"() <{function_type = (i32, f32, f64, f16) -> (f32, f64, i32, i16, f64, f16, f32, i32, bf16), sym_name = "float_casts"}> ({
  ^bb0(%arg0: i32, %arg1: f32, %arg2: f64, %arg3: f16):
    %0 = "arith.sitofp"(%arg0) : (i32) -> f32
    %1 = "arith.uitofp"(%arg0) : (i32) -> f64
    %2 = "arith.fptosi"(%arg1) : (f32) -> i32
    %3 = "arith.fptoui"(%arg2) : (f64) -> i16
    %4 = "arith.extf"(%arg1) : (f32) -> f64
    %5 = "arith.truncf"(%arg2) : (f64) -> f16
    %6 = "arith.extf"(%arg3) : (f16) -> f32
    %7 = "arith.bitcast"(%arg1) : (f32) -> i32
    %8 = "arith.truncf"(%arg1) : (f32) -> bf16
    "func.return"(%0, %1, %2, %3, %4, %5, %6, %7, %8) : (f32, f64, i32, i16, f64, f16, f32, i32, bf16) -> ()
  }) : () -> ()
}) : () -> ()
