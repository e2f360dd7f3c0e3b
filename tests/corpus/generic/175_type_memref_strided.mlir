"builtin.module"() ({
  %0:2 = "test.op"() : () -> (memref<4x4xf32, strided<[4, 1]>>, memref<?x?xf32, strided<[?, 1], offset: ?>>)
  %1:3 = "test.op"() : () -> (memref<8xf32, strided<[1], offset: 5>>, memref<f32, strided<[]>>, memref<4x4xf32, strided<[1, 4]>>)
}) : () -> ()
