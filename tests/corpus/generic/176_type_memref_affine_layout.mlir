#map = affine_map<(d0, d1) -> (d1, d0)>
#map1 = affine_map<(d0)[s0] -> (d0 + s0)>
"builtin.module"() ({
  %0:3 = "test.op"() : () -> (memref<4x4xf32, #map>, memref<16xf32, #map1>, memref<4x4xf32>)
}) : () -> ()
