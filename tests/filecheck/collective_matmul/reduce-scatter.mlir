// RUN: loom-opt %s --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on})' | FileCheck %s

// A dot whose partial sums are reduce-scattered along its rows becomes a ring loop over a
// shard-sized accumulator: the first step (before the loop) computes the rows of block
// (k + 1) mod 2 of the lhs; each further step passes the accumulator to the previous partition
// of the group and adds the rows of block (k + i + 1) mod 2, so the last block added is the
// partition's own. Groups {0, 2} and {1, 3}: the ring stays inside each.

// CHECK-LABEL: func.func @main
// CHECK:         %[[I1:.*]] = stablehlo.constant dense<1> : tensor<i32>
// CHECK:         %[[TABLE:.*]] = stablehlo.constant dense<[0, 0, 1, 1]> : tensor<4xi32>
// CHECK:         %[[K:.*]] = stablehlo.reshape
// CHECK:         %[[FIRST_SLICE:.*]] = stablehlo.dynamic_slice %arg0, %{{.*}}, %{{.*}}, sizes = [4, 3] : (tensor<8x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[FIRST:.*]] = stablehlo.dot_general %[[FIRST_SLICE]], %arg1, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %[[LOOP:.*]]:5 = stablehlo.while(%[[ACC:.*]] = %[[FIRST]], %[[A:.*]] = %arg0, %[[B:.*]] = %arg1, %[[KK:.*]] = %[[K]], %[[I:.*]] = %[[I1]])
// CHECK:         cond {
// CHECK-NEXT:      %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<i32>
// CHECK-NEXT:      stablehlo.compare LT, %[[I]], %[[TWO]]
// CHECK:         } do {
// CHECK:           %[[RECV:.*]] = "stablehlo.collective_permute"(%[[ACC]]) <{channel_handle = #stablehlo.channel_handle<handle = 8, type = 1>, source_target_pairs = dense<{{\[\[}}0, 2], [2, 0], [1, 3], [3, 1]]> : tensor<4x2xi64>}>
// CHECK:           %[[SUM:.*]] = stablehlo.add %[[KK]], %[[I]]
// CHECK:           %[[SUM1:.*]] = stablehlo.add %[[SUM]], %{{.*}}
// CHECK-NEXT:      %[[OWNER:.*]] = stablehlo.remainder %[[SUM1]], %{{.*}}
// CHECK:           %[[ROW:.*]] = stablehlo.multiply %[[OWNER]], %{{.*}}
// CHECK-NEXT:      %[[SLICE:.*]] = stablehlo.dynamic_slice %[[A]], %[[ROW]], %{{.*}}, sizes = [4, 3]
// CHECK-NEXT:      %[[PART:.*]] = stablehlo.dot_general %[[SLICE]], %[[B]]
// CHECK-NEXT:      %[[NEW:.*]] = stablehlo.add %[[RECV]], %[[PART]] : tensor<4x6xf32>
// CHECK:           stablehlo.return %[[NEW]], %[[A]], %[[B]], %[[KK]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[LOOP]]#0 : tensor<4x6xf32>
// CHECK-NOT:     stablehlo.reduce_scatter

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<8x3xf32>, %arg1: tensor<3x6xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x3xf32>, tensor<3x6xf32>) -> tensor<8x6xf32>
    %1 = "stablehlo.reduce_scatter"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x6xf32>) -> tensor<4x6xf32>
    return %1 : tensor<4x6xf32>
  }
}
