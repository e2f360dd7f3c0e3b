"builtin.module"() ({
  "func.func"() <{function_type = (f64) -> f64, sym_name = "poly"}> ({
  ^bb0(%arg0: f64):
    %0 = "arith.constant"() <{value = 1.000000e+00 : f64}> : () -> f64
    %1 = "arith.constant"() <{value = -2.500000e+00 : f64}> : () -> f64
    %2 = "arith.constant"() <{value = 1.250000e-01 : f64}> : () -> f64
    %3 = "arith.mulf"(%arg0, %2) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    %4 = "arith.addf"(%3, %1) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    %5 = "arith.mulf"(%4, %arg0) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    %6 = "arith.addf"(%5, %0) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    %7 = "arith.negf"(%6) <{fastmath = #arith.fastmath<none>}> : (f64) -> f64
    %8 = "arith.maximumf"(%7, %arg0) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    %9 = "arith.minimumf"(%8, %0) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    "func.return"(%9) : (f64) -> ()
  }) : () -> ()
}) : () -> ()
