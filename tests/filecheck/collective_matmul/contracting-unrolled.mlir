// RUN: loom-opt %s --pass-pipeline='builtin.module(decompose-collective-matmul{mode=on unroll=true})' | FileCheck %s

// The all-gather of x along its columns, which the dot contracts: at step i this partition holds
// the shard of position (k + i) mod 4; it multiplies it by the matching rows of w (a dynamic_slice
// at ((k + i) mod 4) * 3) and adds the partial product into the full-size result. Unrolled, each
// loop iteration runs two steps (two permutes, two partial dots), the loop covering steps 0 and 1;
// step 2 (the odd one of N - 1 = 3) and the last block are written out after it.

// CHECK-LABEL: func.func @main
// CHECK:         %[[ZEROS:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x5xf32>
// CHECK:         %[[LOOP:.*]]:5 = stablehlo.while(%[[X:.*]] = %arg0, %[[W:.*]] = %arg1, %[[ACC:.*]] = %[[ZEROS]], %[[K:.*]] = %{{.*}}, %[[I:.*]] = %{{.*}})
// CHECK:         cond {
// CHECK-NEXT:      %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<i32>
// CHECK-NEXT:      stablehlo.compare LT, %[[I]], %[[TWO]]
// CHECK:         } do {
// CHECK:           %[[SENT:.*]] = "stablehlo.collective_permute"(%[[X]])
// CHECK:           %[[SUM:.*]] = stablehlo.add %[[K]], %[[I]]
// CHECK:           %[[ROWS:.*]] = stablehlo.dynamic_slice %[[W]], %{{.*}}, %{{.*}}, sizes = [3, 5]
// CHECK-NEXT:      %[[PART:.*]] = stablehlo.dot_general %[[X]], %[[ROWS]], contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[ACC1:.*]] = stablehlo.add %[[ACC]], %[[PART]] : tensor<2x5xf32>
// CHECK:           %[[I1:.*]] = stablehlo.add %[[I]], %{{.*}}
// CHECK-NEXT:      %[[SENT2:.*]] = "stablehlo.collective_permute"(%[[SENT]])
// CHECK:           stablehlo.add %[[K]], %[[I1]]
// CHECK:           %[[ROWS2:.*]] = stablehlo.dynamic_slice %[[W]]
// CHECK-NEXT:      %[[PART2:.*]] = stablehlo.dot_general %[[SENT]], %[[ROWS2]]
// CHECK-NEXT:      %[[ACC2:.*]] = stablehlo.add %[[ACC1]], %[[PART2]]
// CHECK:           stablehlo.return %[[SENT2]], %[[W]], %[[ACC2]], %[[K]], %{{.*}}
// CHECK-NEXT:    }
// CHECK:         %[[LASTX:.*]] = "stablehlo.collective_permute"(%[[LOOP]]#0)
// CHECK:         %[[P2:.*]] = stablehlo.dot_general %[[LOOP]]#0, %{{.*}}
// CHECK-NEXT:    %[[A2:.*]] = stablehlo.add %[[LOOP]]#2, %[[P2]]
// CHECK:         %[[P3:.*]] = stablehlo.dot_general %[[LASTX]], %{{.*}}
// CHECK-NEXT:    %[[OUT:.*]] = stablehlo.add %[[A2]], %[[P3]]
// CHECK-NEXT:    return %[[OUT]]
// CHECK-NOT:     stablehlo.all_gather

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<12x5xf32>) -> tensor<2x5xf32> {
    %0 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<2x3xf32>) -> tensor<2x12xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<2x12xf32>, tensor<12x5xf32>) -> tensor<2x5xf32>
    return %1 : tensor<2x5xf32>
  }
}
