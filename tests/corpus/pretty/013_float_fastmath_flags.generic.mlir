"builtin.module"() ({
  "func.func"() <{function_type = (f64, f64) -> (f64, f64, f64, f64, f64, i1), sym_name = "fastmath"}> ({
  ^bb0(%arg0: f64, %arg1: f64):
    %0 = "arith.addf"(%arg0, %arg1) <{fastmath = #arith.fastmath<fast>}> : (f64, f64) -> f64
    %1 = "arith.mulf"(%arg0, %arg1) <{fastmath = #arith.fastmath<nnan,ninf>}> : (f64, f64) -> f64
    %2 = "arith.subf"(%arg0, %arg1) <{fastmath = #arith.fastmath<reassoc,contract>}> : (f64, f64) -> f64
    %3 = "arith.negf"(%arg0) <{fastmath = #arith.fastmath<nsz>}> : (f64) -> f64
    %4 = "arith.divf"(%arg0, %arg1) <{fastmath = #arith.fastmath<none>}> : (f64, f64) -> f64
    %5 = "arith.cmpf"(%arg0, %arg1) <{fastmath = #arith.fastmath<nnan>, predicate = 4 : i64}> : (f64, f64) -> i1
    "func.return"(%0, %1, %2, %3, %4, %5) : (f64, f64, f64, f64, f64, i1) -> ()
  }) : () -> ()
}) : () -> ()
