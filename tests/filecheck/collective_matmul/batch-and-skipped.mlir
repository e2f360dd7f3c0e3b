// RUN: loom-opt %s --remarks --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on})' 2>&1 | FileCheck %s

// The first gather is along x's batch dimension: each step slices w's matching batch block (at
// ((k + i) mod 2) * 1), multiplies, and writes the product at that same batch offset. The second
// gather's value is also returned: decomposing its dot would not remove the gather (XLA's
// users check), so it stays, with a remark saying why.

// CHECK-LABEL: func.func @main
// CHECK:       stablehlo.while
// CHECK:       } do {
// CHECK:         %[[SENT:.*]] = "stablehlo.collective_permute"(%[[X:.*]]) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>
// CHECK:         %[[OFF:.*]] = stablehlo.multiply
// CHECK-NEXT:    %[[W:.*]] = stablehlo.dynamic_slice %{{.*}}, %[[OFF]], %{{.*}}, %{{.*}}, sizes = [1, 5, 4]
// CHECK-NEXT:    %[[PART:.*]] = stablehlo.dot_general %[[X]], %[[W]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<1x3x5xf32>, tensor<1x5x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NEXT:    stablehlo.dynamic_update_slice %{{.*}}, %[[PART]], %[[OFF]], %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<1x3x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x3x4xf32>
// CHECK:       }
// CHECK:       %[[KEPT:.*]] = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>
// CHECK-NEXT:  stablehlo.dot_general %[[KEPT]], %arg1
// CHECK:       batch-and-skipped.mlir:25:10: remark: 'stablehlo.all_gather' op not decomposed into a collective matmul: the gathered value has 2 users, not only the dot

module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<1x3x5xf32>, %arg1: tensor<2x5x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x5xf32>) {
    %0 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<1x3x5xf32>) -> tensor<2x3x5xf32>
    %1 = stablehlo.dot_general %0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
    %2 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<1x3x5xf32>) -> tensor<2x3x5xf32>
    %3 = stablehlo.dot_general %2, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
    %4 = stablehlo.add %1, %3 : tensor<2x3x4xf32>
    return %4, %2 : tensor<2x3x4xf32>, tensor<2x3x5xf32>
  }
}
