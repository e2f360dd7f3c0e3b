// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' | FileCheck %s

// A manual computation (shard_map) is already per device: its body is inlined on the operands'
// local shards, its collectives kept as written, its sharding constraints dropped; what follows
// sees the results split as out_shardings says.

// CHECK:      func.func @main(%arg0: tensor<4xf32> {loom.global_type = tensor<8xf32>, sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {loom.global_type = tensor<4xf32>, sdy.sharding = #sdy.sharding<@mesh, [{}]>})
// CHECK-NEXT:   %[[S:.*]] = stablehlo.sine %arg0 : tensor<4xf32>
// CHECK-NEXT:   %[[R:.*]] = "stablehlo.all_reduce"(%[[S]]) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1]]> : tensor<1x2xi64>, use_global_device_ids}>
// CHECK:          stablehlo.add
// CHECK-NEXT:     stablehlo.return
// CHECK:        %[[N:.*]] = stablehlo.negate %[[R]] : tensor<4xf32>
// CHECK-NEXT:   return %[[N]] : tensor<4xf32>
// CHECK-NOT:  sdy.sharding_constraint

module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}]>]>}> ({
    ^bb0(%arg1: tensor<4xf32>):
      %1 = "stablehlo.sine"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
      %2 = "sdy.sharding_constraint"(%1) <{sharding = #sdy.sharding<@mesh, [{}]>}> : (tensor<4xf32>) -> tensor<4xf32>
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %4 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        %5 = "sdy.sharding_constraint"(%4) <{sharding = #sdy.sharding<@mesh, []>}> : (tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%5) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>) -> tensor<4xf32>
      "sdy.return"(%3) : (tensor<4xf32>) -> ()
    }) : (tensor<8xf32>) -> tensor<4xf32>
    %n = stablehlo.negate %0 : tensor<4xf32>
    return %n : tensor<4xf32>
  }
}
