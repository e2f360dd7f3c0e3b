"builtin.module"() ({
  "func.func"() <{function_type = (f32, f32) -> f32, sym_name = "floats"}> ({
  ^bb0(%arg0: f32, %arg1: f32):
    %0 = "arith.addf"(%arg0, %arg1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %1 = "arith.subf"(%0, %arg1) <{fastmath = #arith.fastmath<fast>}> : (f32, f32) -> f32
    %2 = "arith.mulf"(%1, %arg0) <{fastmath = #arith.fastmath<nnan,ninf>}> : (f32, f32) -> f32
    %3 = "arith.divf"(%2, %arg1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %4 = "arith.remf"(%3, %arg1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %5 = "arith.negf"(%4) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
    %6 = "arith.maximumf"(%5, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %7 = "arith.minimumf"(%6, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %8 = "arith.maxnumf"(%7, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "func.return"(%8) : (f32) -> ()
  }) : () -> ()
}) : () -> ()
