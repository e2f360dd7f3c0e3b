func.func @bools(%a: i1, %b: i1) -> (i1, i1, i1, i1, i1, i1) {
  %true = arith.constant true
  %false = arith.constant false
  %0 = arith.andi %a, %true : i1
  %1 = arith.ori %a, %false : i1
  %2 = arith.xori %a, %true : i1
  %3 = arith.xori %2, %true : i1
  %4 = arith.andi %a, %false : i1
  %5 = arith.ori %b, %true : i1
  return %0, %1, %2, %3, %4, %5 : i1, i1, i1, i1, i1, i1
}
