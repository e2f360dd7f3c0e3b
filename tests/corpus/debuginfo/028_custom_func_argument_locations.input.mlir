func.func @f(%a: i32 loc("arg_a":1:1), %b: i32 loc("arg_b")) -> i32 {
  %0 = arith.addi %a, %b : i32 loc("add")
  return %0 : i32 loc(unknown)
} loc("func_f")
func.func private @decl(i32) loc("decl")
