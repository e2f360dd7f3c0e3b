// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' | FileCheck %s

// 10 elements over 4 partitions: shards of ceil(10 / 4) = 3, as XLA pads. The sum over the split
// dimension puts the reduction's identity (its init value) in the padding before reducing
// locally, then sums across partitions.

// CHECK:      func.func @main(%arg0: tensor<3xf32> {loom.global_type = tensor<10xf32>, sdy.sharding = #sdy.sharding<@mesh, [{"d"}]>}) -> (tensor<f32> {loom.global_type = tensor<f32>, sdy.sharding = #sdy.sharding<@mesh, []>})
// CHECK:      %[[I:.*]] = stablehlo.iota dim = 0 : tensor<3xi32>
// CHECK:      %[[POS:.*]] = stablehlo.add %[[I]], %{{.*}} : tensor<3xi32>
// CHECK:      %[[IN:.*]] = stablehlo.compare LT, %[[POS]], %{{.*}} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
// CHECK:      %[[M:.*]] = stablehlo.select %[[IN]], %{{.*}}, %{{.*}} : tensor<3xi1>, tensor<3xf32>
// CHECK:      %[[R:.*]] = stablehlo.reduce(%[[M]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
// CHECK:      "stablehlo.all_reduce"(%[[R]])

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["d"=4]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%x: tensor<10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}]>})
      -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %e = stablehlo.exponential %x : tensor<10xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<10xf32>, tensor<f32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}
