// RUN: loom-opt %s --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' | FileCheck %s

// Two matmuls that need the same operand whole gather it once.

// CHECK:      %[[X:.*]] = "stablehlo.all_gather"(%arg0)
// CHECK-NOT:  "stablehlo.all_gather"(%arg0)
// CHECK:      stablehlo.dot_general %[[X]], %{{.*}}
// CHECK:      stablehlo.dot_general %[[X]], %{{.*}}

module attributes {mhlo.num_partitions = 4 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["d"=4]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>}, %w: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>}, %v: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>})
      -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"d"}]>}) {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.dot_general %x, %v, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}
