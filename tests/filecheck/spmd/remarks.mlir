// RUN: loom-opt %s --remarks --pass-pipeline='builtin.module(sharding-propagation,spmd-partition)' 2>&1 | FileCheck %s

// An op without a sharding rule runs on whole operands (all-gathered), with a remark naming it
// and where it is; its result is then split as propagation asked (a slice, no communication).

// CHECK:      %[[G:.*]] = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64
// CHECK:      %[[C:.*]] = stablehlo.custom_call @opaque(%[[G]]) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK:      stablehlo.dynamic_slice %[[C]], %{{.*}}, sizes = [4] : (tensor<8xf32>, tensor<i32>) -> tensor<4xf32>
// CHECK:      remarks.mlir:15:10: remark: 'stablehlo.custom_call' op has no sharding rule: computed replicated (its operands are all-gathered)

module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["d"=2]>, sym_name = "mesh"}> : () -> ()
  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}]>})
      -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}]>}) {
    %0 = stablehlo.custom_call @opaque(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
