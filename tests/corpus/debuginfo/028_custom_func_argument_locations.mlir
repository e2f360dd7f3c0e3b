#loc2 = loc("arg_a":1:1)
#loc3 = loc("arg_b")
"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> i32, sym_name = "f"}> ({
  ^bb0(%arg0: i32 loc("arg_a":1:1), %arg1: i32 loc("arg_b")):
    %0 = "arith.addi"(%arg0, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32 loc(#loc4)
    "func.return"(%0) : (i32) -> () loc(#loc5)
  }) : () -> () loc(#loc1)
  "func.func"() <{function_type = (i32) -> (), sym_name = "decl", sym_visibility = "private"}> ({
  }) : () -> () loc(#loc6)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("func_f")
#loc4 = loc("add")
#loc5 = loc(unknown)
#loc6 = loc("decl")
