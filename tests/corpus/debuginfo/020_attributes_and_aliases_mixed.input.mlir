"test.op"() {m = affine_map<(d0) -> (d0)>, s = affine_set<(d0) : (d0 >= 0)>} : () -> () loc("with maps")
"test.op"() {m = affine_map<(d0) -> (d0 + 1)>} : () -> () loc(fused<affine_map<(d0) -> (d0)>>["x"])
