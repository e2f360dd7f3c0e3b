"builtin.module"() ({
  "func.func"() <{function_type = (f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32), sym_name = "fidentities"}> ({
  ^bb0(%arg0: f32):
    %0 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %1 = "arith.addf"(%arg0, %0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %2 = "arith.mulf"(%arg0, %0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %3 = "arith.subf"(%arg0, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "func.return"(%arg0, %1, %arg0, %arg0, %2, %arg0, %arg0, %3, %arg0) : (f32, f32, f32, f32, f32, f32, f32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
