"builtin.module"() ({
  %0 = "test.def"() : () -> tensor<*xf32>
  %1 = "test.def"() : () -> !foo.t
  %2 = "test.def"() : () -> memref<2x?xf32, strided<[?, 1]>>
  "test.use"(%0, %1, %2) : (tensor<*xf32>, !foo.t, memref<2x?xf32, strided<[?, 1]>>) -> ()
}) : () -> ()
