#loc2 = loc("arg_a")
#loc3 = loc("f.py":9:9)
#loc4 = loc("-":2:53)
#loc6 = loc("x")
#loc7 = loc("y")
#loc8 = loc(unknown)
#loc10 = loc(fused[#loc6, #loc7])
"builtin.module"() ({
  "test.func"() ({
  ^bb0(%arg0: i32 loc("arg_a"), %arg1: f32 loc("f.py":9:9), %arg2: i1 loc("-":2:53)):
    "test.br"(%arg0)[^bb1] : (i32) -> () loc(#loc5)
  ^bb1(%0: i32 loc(fused[#loc6, #loc7]), %1: i64 loc(unknown)):  // pred: ^bb0
    "test.return"() : () -> () loc(#loc9)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("func")
#loc5 = loc("br")
#loc9 = loc("ret")
