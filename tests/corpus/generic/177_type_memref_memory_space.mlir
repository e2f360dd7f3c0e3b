"builtin.module"() ({
  %0:6 = "test.op"() : () -> (memref<4xf32, 1>, memref<4xf32>, memref<4xf32, "gpu">, memref<4xf32, strided<[2]>, 5 : i32>, memref<*xf32>, memref<*xi8, 2>)
}) : () -> ()
