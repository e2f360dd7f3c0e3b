func.func @f(%c: i1 loc("c")) -> i32 {
  cf.cond_br %c, ^bb1, ^bb2 loc("branch")
^bb1:
  %0 = arith.constant 1 : i32 loc("one")
  cf.br ^bb3(%0 : i32)
^bb2:
  %1 = arith.constant 2 : i32 loc("two")
  cf.br ^bb3(%1 : i32)
^bb3(%r: i32 loc("merge_arg")):
  return %r : i32
}
