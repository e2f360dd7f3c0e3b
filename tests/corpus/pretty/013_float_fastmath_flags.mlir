module {
  func.func @fastmath(%arg0: f64, %arg1: f64) -> (f64, f64, f64, f64, f64, i1) {
    %0 = arith.addf %arg0, %arg1 fastmath<fast> : f64
    %1 = arith.mulf %arg0, %arg1 fastmath<nnan,ninf> : f64
    %2 = arith.subf %arg0, %arg1 fastmath<reassoc,contract> : f64
    %3 = arith.negf %arg0 fastmath<nsz> : f64
    %4 = arith.divf %arg0, %arg1 : f64
    %5 = arith.cmpf olt, %arg0, %arg1 fastmath<nnan> : f64
    return %0, %1, %2, %3, %4, %5 : f64, f64, f64, f64, f64, i1
  }
}
