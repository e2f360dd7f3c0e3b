// RUN: loom-opt %s --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on})' | FileCheck %s

// The all-gather of w along its columns (not contracted) feeding a dot becomes a ring loop: this
// partition's position k comes from partition_id; each of the N - 1 = 3 steps sends the shard it
// holds to the previous partition and, independently, computes the block of columns of the shard
// it holds, the one of position (k + i) mod 4, written at offset ((k + i) mod 4) * 3. The last
// block is computed after the loop. Constants and k are made at the start of their block.

// CHECK-LABEL: func.func @main
// CHECK:         %[[I0:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK-NEXT:    %[[ZEROS:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x12xf32>
// CHECK-NEXT:    %[[PID:.*]] = stablehlo.partition_id : tensor<ui32>
// CHECK-NEXT:    %[[PID32:.*]] = stablehlo.convert %[[PID]] : (tensor<ui32>) -> tensor<i32>
// CHECK-NEXT:    %[[TABLE:.*]] = stablehlo.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
// CHECK-NEXT:    %[[ENTRY:.*]] = stablehlo.dynamic_slice %[[TABLE]], %[[PID32]], sizes = [1]
// CHECK-NEXT:    %[[K:.*]] = stablehlo.reshape %[[ENTRY]] : (tensor<1xi32>) -> tensor<i32>
// CHECK-NEXT:    %[[LOOP:.*]]:5 = stablehlo.while(%[[W:.*]] = %arg1, %[[X:.*]] = %arg0, %[[ACC:.*]] = %[[ZEROS]], %[[KK:.*]] = %[[K]], %[[I:.*]] = %[[I0]])
// CHECK:         cond {
// CHECK-NEXT:      %[[THREE:.*]] = stablehlo.constant dense<3> : tensor<i32>
// CHECK-NEXT:      %[[LT:.*]] = stablehlo.compare LT, %[[I]], %[[THREE]]
// CHECK-NEXT:      stablehlo.return %[[LT]]
// CHECK-NEXT:    } do {
// CHECK:           %[[SENT:.*]] = "stablehlo.collective_permute"(%[[W]]) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, source_target_pairs = dense<{{\[\[}}0, 3], [1, 0], [2, 1], [3, 2]]> : tensor<4x2xi64>}>
// CHECK-NEXT:      %[[PART:.*]] = stablehlo.dot_general %[[X]], %[[W]], contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
// CHECK:           %[[SUM:.*]] = stablehlo.add %[[KK]], %[[I]]
// CHECK-NEXT:      %[[OWNER:.*]] = stablehlo.remainder %[[SUM]], %{{.*}}
// CHECK:           %[[OFF:.*]] = stablehlo.multiply %[[OWNER]], %{{.*}}
// CHECK-NEXT:      %[[UPD:.*]] = stablehlo.dynamic_update_slice %[[ACC]], %[[PART]], %{{.*}}, %[[OFF]]
// CHECK:           %[[NEXT:.*]] = stablehlo.add %[[I]], %{{.*}}
// CHECK-NEXT:      stablehlo.return %[[SENT]], %[[X]], %[[UPD]], %[[KK]], %[[NEXT]]
// CHECK-NEXT:    }
// CHECK:         %[[LAST:.*]] = stablehlo.dot_general %[[LOOP]]#1, %[[LOOP]]#0
// CHECK:         %[[OUT:.*]] = stablehlo.dynamic_update_slice %[[LOOP]]#2, %[[LAST]]
// CHECK-NEXT:    %[[R:.*]] = stablehlo.negate %[[OUT]] : tensor<2x12xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     stablehlo.all_gather

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<2x6xf32>, %arg1: tensor<6x3xf32>) -> tensor<2x12xf32> {
    %0 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<6x3xf32>) -> tensor<6x12xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x12xf32>) -> tensor<2x12xf32>
    %2 = stablehlo.negate %1 : tensor<2x12xf32>
    return %2 : tensor<2x12xf32>
  }
}
