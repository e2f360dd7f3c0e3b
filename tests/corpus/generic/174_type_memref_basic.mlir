"builtin.module"() ({
  %0:4 = "test.op"() : () -> (memref<f32>, memref<4xf32>, memref<?x8xi8>, memref<2x0xf64>)
}) : () -> ()
