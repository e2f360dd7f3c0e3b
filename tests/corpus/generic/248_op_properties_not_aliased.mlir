#map = affine_map<(d0) -> (d0 + 3)>
#map1 = affine_map<(d0) -> (d0 + 4)>
"builtin.module"() ({
  "test.a"() <{m = affine_map<(d0) -> (d0 + 1)>}> : () -> ()
  "test.b"() <{m = affine_map<(d0) -> (d0 + 2)>}> {n = #map} : () -> ()
  "test.c"() <{m = #map1}> {n = #map1} : () -> ()
  "test.d"() <{l = loc("x"), s = affine_set<(d0) : (d0 >= 0)>}> : () -> ()
}) : () -> ()
