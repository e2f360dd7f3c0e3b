#map = affine_map<(d0) -> (d0 + 1)>
"builtin.module"() ({
  %0 = "test.op"() {a = [1, 2, 3], b = {a = 1 : i32}, c = #map, t = tuple<tensor<4x?xf32>, i1>} : () -> tensor<4x?xf32>
}) : () -> ()
