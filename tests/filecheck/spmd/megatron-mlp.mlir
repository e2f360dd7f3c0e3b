// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation)' | FileCheck %s --check-prefix=PROP
// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' | FileCheck %s

// A Megatron MLP: w1 split by columns, w2 by rows. Propagation splits the hidden activations by
// "model"; partitioning runs both matmuls on local shards and sums the partial products once.

// PROP:      %[[H:.*]] = stablehlo.dot_general %arg0, %arg1{{.*}}{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"model"}]>]>}
// PROP:      stablehlo.maximum {{.*}}{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"model"}]>]>}
// PROP:      stablehlo.dot_general {{.*}}{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}

// CHECK:      func.func @main(%arg0: tensor<8x16xf32> {loom.global_type = tensor<8x16xf32>, sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<16x8xf32> {loom.global_type = tensor<16x32xf32>, sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<8x16xf32> {loom.global_type = tensor<32x16xf32>, sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<8x16xf32> {loom.global_type = tensor<8x16xf32>, sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK-NOT:  all_gather
// CHECK:      %[[A:.*]] = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
// CHECK:      %[[B:.*]] = stablehlo.dot_general %{{.*}}, %arg2, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[C:.*]] = "stablehlo.all_reduce"(%[[B]]) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}>
// CHECK:        stablehlo.add
// CHECK:      return %[[C]] : tensor<8x16xf32>
// CHECK-NOT:  sdy.sharding_per_value

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["model"=4]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                  %w1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                  %w2: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
      -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %z = stablehlo.constant dense<0.0> : tensor<8x32xf32>
    %r = stablehlo.maximum %h, %z : tensor<8x32xf32>
    %y = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}
