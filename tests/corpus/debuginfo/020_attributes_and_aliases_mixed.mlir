#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> (d0 + 1)>
#set = affine_set<(d0) : (d0 >= 0)>
"builtin.module"() ({
  "test.op"() {m = #map, s = #set} : () -> () loc(#loc1)
  "test.op"() {m = #map1} : () -> () loc(#loc3)
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("with maps")
#loc2 = loc("x")
#loc3 = loc(fused<#map>[#loc2])
