// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' | FileCheck %s

// A while loop over a sharded carry runs on the local shard: the carry, the regions' arguments
// and what the body returns have the local type; the condition's sum over the split dimension
// is summed across partitions inside the loop, so every partition takes the same branch.

// CHECK:      stablehlo.while(%[[IT:.*]] = %arg0) : tensor<2x8xf32>
// CHECK:      cond {
// CHECK:        %[[S:.*]] = stablehlo.reduce(%[[IT]] init: %{{.*}}) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<f32>
// CHECK:        %[[T:.*]] = "stablehlo.all_reduce"(%[[S]])
// CHECK:        stablehlo.compare GT, %[[T]]
// CHECK:      } do {
// CHECK:        %[[N:.*]] = stablehlo.multiply %[[IT]], %{{.*}} : tensor<2x8xf32>
// CHECK-NEXT:   stablehlo.return %[[N]] : tensor<2x8xf32>

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["d"=4]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>})
      -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) {
    %0 = stablehlo.while(%it = %x) : tensor<8x8xf32>
      cond {
        %z = stablehlo.constant dense<0.0> : tensor<f32>
        %one = stablehlo.constant dense<1.0> : tensor<f32>
        %s = stablehlo.reduce(%it init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>
        %c = stablehlo.compare GT, %s, %one : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %h = stablehlo.constant dense<0.5> : tensor<8x8xf32>
        %n = stablehlo.multiply %it, %h : tensor<8x8xf32>
        stablehlo.return %n : tensor<8x8xf32>
      }
    return %0 : tensor<8x8xf32>
  }
}
