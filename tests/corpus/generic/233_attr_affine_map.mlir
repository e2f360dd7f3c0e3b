#map = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2)>
#map1 = affine_map<() -> ()>
#map2 = affine_map<(d0) -> (d0 * 2 + 1, d0 mod 3, d0 ceildiv 4, -d0, d0 * 2)>
#map3 = affine_map<(d0, d1) -> (d1, d0)>
#map4 = affine_map<(d0)[s0, s1] -> (d0 * s0 + s1 - 3)>
#map5 = affine_map<(d0, d1) -> (0, 7)>
"builtin.module"() ({
  "test.op"() {a = #map, b = #map1, c = #map2, d = #map3, e = #map4, f = #map5} : () -> ()
  "test.op2"() {a = #map} : () -> ()
}) : () -> ()
