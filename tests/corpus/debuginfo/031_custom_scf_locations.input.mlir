func.func @f(%n: index) -> f32 {
  %c0 = arith.constant 0 : index loc("c0")
  %c1 = arith.constant 1 : index loc("c1")
  %init = arith.constant 0.0 : f32 loc(fused["init", "zero"])
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %x = arith.addf %acc, %acc : f32 loc(callsite("body" at "loop"))
    scf.yield %x : f32
  } loc("for")
  return %r : f32
}
