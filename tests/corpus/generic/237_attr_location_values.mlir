#loc = loc("x")
#loc1 = loc("y":1:2)
#loc2 = loc("a")
#loc3 = loc("b")
#loc4 = loc(fused[#loc2, #loc3])
"builtin.module"() ({
  "test.op"() {l = #loc, m = [#loc1], n = #loc4} : () -> ()
}) : () -> ()
