// RUN: loom-opt %s --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on},schedule-latency-hiding)' | FileCheck %s

// The all-gather ring loop with its permute split: the shard's transfer starts at the top of the
// body, the step's dot (on the shard held) and the update of the result run while it travels, and
// the done comes right before the return that hands the received shard to the next step.

// CHECK-LABEL: func.func @main
// CHECK:         stablehlo.while(%[[W:[^ ]*]] = %arg1
// CHECK:         } do {
// CHECK-NEXT:      %[[F:.*]] = comm.collective_permute_start %[[W]] {channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, source_target_pairs = dense<{{\[\[}}0, 3], [1, 0], [2, 1], [3, 2]]> : tensor<4x2xi64>} : tensor<6x3xf32>
// CHECK-NOT:       comm.collective_permute_done
// CHECK:           stablehlo.dot_general %{{.*}}, %[[W]]
// CHECK:           stablehlo.dynamic_update_slice
// CHECK:           %[[RECV:.*]] = comm.collective_permute_done %[[F]] : !comm.future<tensor<6x3xf32>>
// CHECK-NEXT:      stablehlo.return %[[RECV]],
// CHECK:         stablehlo.dot_general
// CHECK-NOT:     stablehlo.collective_permute

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<2x6xf32>, %arg1: tensor<6x3xf32>) -> tensor<2x12xf32> {
    %0 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<6x3xf32>) -> tensor<6x12xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x12xf32>) -> tensor<2x12xf32>
    return %1 : tensor<2x12xf32>
  }
}
