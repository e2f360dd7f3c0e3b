// RUN: loom-opt %s --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on bidirectional=true})' | FileCheck %s

// Bidirectional, N = 8: one copy of w's shard goes up the ring (j sends to j - 1), one down
// (j sends to j + 1). Round 0 is the own block; rounds 1 and 2 run in the loop, each computing
// blocks (k + i) mod 8 and (k - i + 8) mod 8; round 3 is written out (with the last permute up),
// then block (k + 4) mod 8. Every collective_permute has its own channel.

// CHECK-LABEL: func.func @main
// CHECK:         %[[K:.*]] = stablehlo.reshape %{{.*}} : (tensor<1xi32>) -> tensor<i32>
// CHECK-NEXT:    %[[UP0:.*]] = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, source_target_pairs = dense<{{\[\[}}0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]>
// CHECK-NEXT:    %[[DOWN0:.*]] = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7], [7, 0]]>
// CHECK:         %[[OWN:.*]] = stablehlo.dot_general %arg0, %arg1
// CHECK:         %[[ACC0:.*]] = stablehlo.dynamic_update_slice %{{.*}}, %[[OWN]]
// CHECK:         %[[LOOP:.*]]:6 = stablehlo.while(%[[UP:.*]] = %[[UP0]], %[[DOWN:.*]] = %[[DOWN0]], %[[X:.*]] = %arg0, %[[ACC:.*]] = %[[ACC0]], %[[KK:.*]] = %[[K]], %[[I:.*]] = %{{.*}})
// CHECK:         cond {
// CHECK-NEXT:      %[[THREE:.*]] = stablehlo.constant dense<3> : tensor<i32>
// CHECK-NEXT:      stablehlo.compare LT, %[[I]], %[[THREE]]
// CHECK:         } do {
// CHECK:           %[[SENT_UP:.*]] = "stablehlo.collective_permute"(%[[UP]]) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, source_target_pairs = dense<{{\[\[}}0, 7],
// CHECK-NEXT:      %[[SENT_DOWN:.*]] = "stablehlo.collective_permute"(%[[DOWN]]) <{channel_handle = #stablehlo.channel_handle<handle = 6, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1],
// CHECK:           %[[P_UP:.*]] = stablehlo.dot_general %[[X]], %[[UP]]
// CHECK:           %[[PLUS:.*]] = stablehlo.add %[[KK]], %[[I]]
// CHECK:           %[[ACC1:.*]] = stablehlo.dynamic_update_slice %[[ACC]], %[[P_UP]]
// CHECK-NEXT:      %[[P_DOWN:.*]] = stablehlo.dot_general %[[X]], %[[DOWN]]
// CHECK:           %[[MINUS:.*]] = stablehlo.subtract %[[KK]], %[[I]]
// CHECK:           %[[ACC2:.*]] = stablehlo.dynamic_update_slice %[[ACC1]], %[[P_DOWN]]
// CHECK:           stablehlo.return %[[SENT_UP]], %[[SENT_DOWN]], %[[X]], %[[ACC2]], %[[KK]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[LAST_UP:.*]] = "stablehlo.collective_permute"(%[[LOOP]]#0) <{channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>
// CHECK:         stablehlo.dot_general %[[LOOP]]#2, %[[LOOP]]#0
// CHECK:         stablehlo.dot_general %[[LOOP]]#2, %[[LOOP]]#1
// CHECK:         stablehlo.dot_general %[[LOOP]]#2, %[[LAST_UP]]
// CHECK:         %[[OUT:.*]] = stablehlo.dynamic_update_slice
// CHECK-NEXT:    stablehlo.negate %[[OUT]] : tensor<2x24xf32>
// CHECK-NOT:     stablehlo.all_gather

module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<2x6xf32>, %arg1: tensor<6x3xf32>) -> tensor<2x24xf32> {
    %0 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> : (tensor<6x3xf32>) -> tensor<6x24xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x24xf32>) -> tensor<2x24xf32>
    %2 = stablehlo.negate %1 : tensor<2x24xf32>
    return %2 : tensor<2x24xf32>
  }
}
