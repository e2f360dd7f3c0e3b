// RUN: loom-opt %s | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The comm dialect's start / done pair, read in the generic form and printed in the pretty one
// (the future's type inferred from the operand, the tensor's from the future) and back.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[F:.*]] = comm.collective_permute_start %arg0 {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 0]]> : tensor<2x2xi64>} : tensor<4x2xf32>
// CHECK-NEXT:    %[[N:.*]] = stablehlo.negate %arg0 : tensor<4x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = comm.collective_permute_done %[[F]] : !comm.future<tensor<4x2xf32>>
// CHECK-NEXT:    %[[S:.*]] = stablehlo.add %[[N]], %[[Y]] : tensor<4x2xf32>
// CHECK-NEXT:    return %[[S]]

// GENERIC:       %[[F:.*]] = "comm.collective_permute_start"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4x2xf32>) -> !comm.future<tensor<4x2xf32>>
// GENERIC:       %{{.*}} = "comm.collective_permute_done"(%[[F]]) : (!comm.future<tensor<4x2xf32>>) -> tensor<4x2xf32>

module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
    %0 = "comm.collective_permute_start"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4x2xf32>) -> !comm.future<tensor<4x2xf32>>
    %1 = "stablehlo.negate"(%arg0) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %2 = "comm.collective_permute_done"(%0) : (!comm.future<tensor<4x2xf32>>) -> tensor<4x2xf32>
    %3 = "stablehlo.add"(%1, %2) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    "func.return"(%3) : (tensor<4x2xf32>) -> ()
  }
}
