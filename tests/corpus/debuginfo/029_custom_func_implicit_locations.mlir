#loc2 = loc("-":1:14)
"builtin.module"() ({
  "func.func"() <{function_type = (f32) -> f32, sym_name = "f"}> ({
  ^bb0(%arg0: f32 loc("-":1:14)):
    %0 = "arith.mulf"(%arg0, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32 loc(#loc3)
    %1 = "arith.addf"(%0, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32 loc(#loc4)
    "func.return"(%1) : (f32) -> () loc(#loc5)
  }) : () -> () loc(#loc1)
  "func.func"() <{function_type = () -> (), sym_name = "g"}> ({
    "func.return"() : () -> () loc(#loc7)
  }) : () -> () loc(#loc6)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("-":1:1)
#loc3 = loc("-":2:8)
#loc4 = loc("-":3:8)
#loc5 = loc("-":4:3)
#loc6 = loc("-":6:1)
#loc7 = loc("-":7:3)
