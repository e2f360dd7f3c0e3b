"builtin.module"() ({
  "func.func"() <{function_type = (f32) -> (f32, f32), sym_name = "fast"}> ({
  ^bb0(%arg0: f32):
    %0 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %1 = "arith.subf"(%arg0, %arg0) <{fastmath = #arith.fastmath<fast>}> : (f32, f32) -> f32
    "func.return"(%0, %1) : (f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
