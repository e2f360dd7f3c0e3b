// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' | FileCheck %s

// Moving a split from rows to columns is one all_to_all; splitting a replicated value is a
// dynamic_slice at this partition's offset (partition_id / stride % size x the shard size); a
// sharding constraint that keeps fewer splits is an all_gather; a reduction of a split dimension
// into a result split by the same axis is a reduce_scatter.

// CHECK-LABEL: func.func @main
// CHECK-SAME:  %arg0: tensor<2x8xf32>
// CHECK:       %[[PID:.*]] = stablehlo.partition_id : tensor<ui32>
// CHECK-NEXT:  %[[P:.*]] = stablehlo.convert %[[PID]] : (tensor<ui32>) -> tensor<i32>
// CHECK:       "stablehlo.all_to_all"(%{{.*}}) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<2x8xf32>) -> tensor<8x2xf32>
// CHECK:       stablehlo.dynamic_slice %arg1, %{{.*}}, %{{.*}}, sizes = [8, 2] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<8x2xf32>
// CHECK:       "stablehlo.all_gather"(%{{.*}}) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<8x2xf32>) -> tensor<8x8xf32>
// CHECK:       "stablehlo.reduce_scatter"(%{{.*}}) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}>
// CHECK:       }) : (tensor<8x8xf32>) -> tensor<2x8xf32>

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["d"=4]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>},
                  %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                  %c: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>},
                  %w: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>})
      -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>},
          tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
          tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) {
    %0 = stablehlo.negate %a : tensor<8x8xf32>
    %1 = "sdy.sharding_constraint"(%0) <{sharding = #sdy.sharding<@mesh, [{}, {"d"}]>}> : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.add %1, %b : tensor<8x8xf32>
    %3 = "sdy.sharding_constraint"(%2) <{sharding = #sdy.sharding<@mesh, [{}, {}]>}> : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
    return %1, %3, %4 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
