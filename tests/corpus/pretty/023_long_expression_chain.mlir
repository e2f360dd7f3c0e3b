module {
  func.func @poly(%arg0: f64) -> f64 {
    %cst = arith.constant 1.000000e+00 : f64
    %cst_0 = arith.constant -2.500000e+00 : f64
    %cst_1 = arith.constant 1.250000e-01 : f64
    %0 = arith.mulf %arg0, %cst_1 : f64
    %1 = arith.addf %0, %cst_0 : f64
    %2 = arith.mulf %1, %arg0 : f64
    %3 = arith.addf %2, %cst : f64
    %4 = arith.negf %3 : f64
    %5 = arith.maximumf %4, %arg0 : f64
    %6 = arith.minimumf %5, %cst : f64
    return %6 : f64
  }
}
