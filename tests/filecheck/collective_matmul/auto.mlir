// RUN: loom-opt %s --remarks --pass-pipeline='builtin.module(decompose-collective-matmul)' 2>&1 | FileCheck %s
// RUN: loom-opt %s --remarks --pass-pipeline='builtin.module(decompose-collective-matmul{threshold-bytes=288})' 2>&1 | FileCheck %s --check-prefix=PRICED

// mode=auto (the default) first asks that the full-size operand (here the gathered 6x12 f32, 288
// bytes) be at least threshold-bytes (256 MiB by default, XLA's gate); past it, XLA's inequality
// priced on the machine (h200 by default), the loop's compute (T_loop) priced from its steps' dots:
// this dot takes well under a nanosecond, the transfers microseconds, so the loop's extra first /
// last step makes it slower. Each skip says why.

// CHECK:       %[[G:.*]] = "stablehlo.all_gather"(%arg1)
// CHECK-NEXT:  stablehlo.dot_general %arg0, %[[G]]
// CHECK:       auto.mlir:{{[0-9]+}}:10: remark: 'stablehlo.all_gather' op not decomposed into a collective matmul: its full-size operand has 288 bytes, under threshold-bytes = 268435456

// PRICED:      %[[G:.*]] = "stablehlo.all_gather"(%arg1)
// PRICED-NEXT: stablehlo.dot_general %arg0, %[[G]]
// PRICED:      remark: 'stablehlo.all_gather' op not decomposed into a collective matmul: the loop would not be faster: T_comp {{[0-9.e+-]+}} us, T_loop {{[0-9.e+-]+}} us, T_comm 6 us, m 1, extra 3 us on h200: max(T_loop, T_comm*m) + extra = 9 us >= T_comp + T_comm = 6 us

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<2x6xf32>, %arg1: tensor<6x3xf32>) -> tensor<2x12xf32> {
    %0 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<6x3xf32>) -> tensor<6x12xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x12xf32>) -> tensor<2x12xf32>
    return %1 : tensor<2x12xf32>
  }
}
