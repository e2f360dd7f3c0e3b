// RUN: loom-opt %s --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on},schedule-latency-hiding)' | FileCheck %s

// The reduce-scatter ring loop with its permute split: the accumulator's transfer starts at the
// top of the body, the step's slice and dot run while it travels, and the done comes right before
// the add that needs the received accumulator.

// CHECK-LABEL: func.func @main
// CHECK:         stablehlo.while
// CHECK:         } do {
// CHECK-NEXT:      %[[F:.*]] = comm.collective_permute_start %[[ACC:[^ ]*]] {channel_handle = #stablehlo.channel_handle<handle = 8, type = 1>, source_target_pairs = dense<{{\[\[}}0, 2], [2, 0], [1, 3], [3, 1]]> : tensor<4x2xi64>} : tensor<4x6xf32>
// CHECK-NOT:       comm.collective_permute_done
// CHECK:           %[[SLICE:.*]] = stablehlo.dynamic_slice
// CHECK-NEXT:      %[[PART:.*]] = stablehlo.dot_general %[[SLICE]]
// CHECK-NEXT:      %[[RECV:.*]] = comm.collective_permute_done %[[F]] : !comm.future<tensor<4x6xf32>>
// CHECK-NEXT:      %{{.*}} = stablehlo.add %[[RECV]], %[[PART]] : tensor<4x6xf32>
// CHECK:           stablehlo.return
// CHECK-NOT:     stablehlo.collective_permute

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
