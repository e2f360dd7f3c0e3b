"builtin.module"() ({
  "func.func"() <{function_type = (memref<4x?xf32>, index) -> (f32, tensor<4x?xf32>), sym_name = "memref"}> ({
  ^bb0(%arg0: memref<4x?xf32>, %arg1: index):
    %0 = "arith.constant"() <{value = 0 : index}> : () -> index
    %1 = "memref.load"(%arg0, %0, %arg1) : (memref<4x?xf32>, index, index) -> f32
    %2 = "memref.alloc"(%arg1) <{alignment = 64 : i64, operandSegmentSizes = array<i32: 1, 0>}> : (index) -> memref<?xf32, 1>
    "memref.store"(%1, %2, %0) : (f32, memref<?xf32, 1>, index) -> ()
    "memref.dealloc"(%2) : (memref<?xf32, 1>) -> ()
    %3 = "tensor.empty"(%arg1) : (index) -> tensor<4x?xf32>
    %4 = "memref.cast"(%arg0) : (memref<4x?xf32>) -> memref<?x?xf32>
    "func.return"(%1, %3) : (f32, tensor<4x?xf32>) -> ()
  }) : () -> ()
}) : () -> ()
