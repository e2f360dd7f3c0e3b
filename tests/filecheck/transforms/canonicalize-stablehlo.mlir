// RUN: loom-opt %s --split-input-file --mlir-print-op-generic --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s

// StableHLO's canonicalization patterns, the exact IR they leave (their values against numpy are
// checked in tests/dialects/test_stablehlo_canonicalize.py).

// A reduce over unit dimensions with the body's identity as its init value is a reshape.
// CHECK-LABEL: sym_name = "reduce_unit_dims"
// CHECK:       ^bb0(%[[X:.*]]: tensor<3x1x4x1xf32>):
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.reshape"(%[[X]]) : (tensor<3x1x4x1xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    "func.return"(%[[R]])
func.func @reduce_unit_dims(%x: tensor<3x1x4x1xf32>) -> tensor<3x4xf32> {
  %init = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%x, %init) <{dimensions = array<i64: 1, 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<3x1x4x1xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// 1 is not the identity of add: the reduce stays.
// CHECK-LABEL: sym_name = "reduce_not_identity"
// CHECK:       "stablehlo.reduce"
// CHECK-NOT:   "stablehlo.reshape"
func.func @reduce_not_identity(%x: tensor<3x1xf32>) -> tensor<3xf32> {
  %init = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%x, %init) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// transpose(a @ b) is b^T @ a^T: the operands, their contracting dimensions and their precisions swap.
// CHECK-LABEL: sym_name = "transpose_of_matmul"
// CHECK:       ^bb0(%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>):
// CHECK-NEXT:    %[[D:.*]] = "stablehlo.dot_general"(%[[B]], %[[A]])
// CHECK-SAME:    lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]
// CHECK-SAME:    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGH>]
// CHECK-SAME:    (tensor<3x5xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>
// CHECK-NEXT:    "func.return"(%[[D]])
func.func @transpose_of_matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<5x4xf32> {
  %d = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
    rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision DEFAULT>]}>
    : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %t = "stablehlo.transpose"(%d) <{permutation = array<i64: 1, 0>}> : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %t : tensor<5x4xf32>
}

// -----

// The product is used elsewhere too: the transpose stays.
// CHECK-LABEL: sym_name = "transpose_of_shared_matmul"
// CHECK:       "stablehlo.dot_general"
// CHECK-NEXT:  "stablehlo.transpose"
func.func @transpose_of_shared_matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> (tensor<5x4xf32>, tensor<4x5xf32>) {
  %d = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
    rhs_contracting_dimensions = [0]>}> : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %t = "stablehlo.transpose"(%d) <{permutation = array<i64: 1, 0>}> : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %t, %d : tensor<5x4xf32>, tensor<4x5xf32>
}

// -----

// The gradient of a split: zero pads of adjacent pieces summed become one concatenation of them
// (the last pad has no padding left and folds away; the nested concatenation flattens).
// CHECK-LABEL: sym_name = "sum_of_adjacent_pads"
// CHECK:       ^bb0(%[[A:.*]]: tensor<4x2xf32>, %[[B:.*]]: tensor<4x3xf32>, %[[C:.*]]: tensor<4x1xf32>):
// CHECK-NEXT:    %[[J:.*]] = "stablehlo.concatenate"(%[[A]], %[[B]], %[[C]]) <{dimension = 1 : i64}>
// CHECK-NEXT:    "func.return"(%[[J]])
func.func @sum_of_adjacent_pads(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %pa = "stablehlo.pad"(%a, %z) <{edge_padding_high = array<i64: 0, 4>, edge_padding_low = array<i64: 0, 0>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x6xf32>
  %pc = "stablehlo.pad"(%c, %z) <{edge_padding_high = array<i64: 0, 0>, edge_padding_low = array<i64: 0, 5>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x6xf32>
  %pb = "stablehlo.pad"(%b, %z) <{edge_padding_high = array<i64: 0, 1>, edge_padding_low = array<i64: 0, 2>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  %s = "stablehlo.add"(%pc, %pb) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %t = "stablehlo.add"(%pa, %s) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}

// -----

// A gap between the pieces (zeros in it), a padding value other than zero: the adds stay.
// CHECK-LABEL: sym_name = "pads_not_adjacent"
// CHECK-COUNT-2: "stablehlo.add"
// CHECK-NOT:   "stablehlo.concatenate"
func.func @pads_not_adjacent(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> (tensor<4x6xf32>, tensor<4x5xf32>) {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %one = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %pa = "stablehlo.pad"(%a, %z) <{edge_padding_high = array<i64: 0, 4>, edge_padding_low = array<i64: 0, 0>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x6xf32>
  %pb = "stablehlo.pad"(%b, %z) <{edge_padding_high = array<i64: 0, 0>, edge_padding_low = array<i64: 0, 3>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  %s = "stablehlo.add"(%pa, %pb) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %qa = "stablehlo.pad"(%a, %one) <{edge_padding_high = array<i64: 0, 3>, edge_padding_low = array<i64: 0, 0>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x5xf32>
  %qb = "stablehlo.pad"(%b, %one) <{edge_padding_high = array<i64: 0, 0>, edge_padding_low = array<i64: 0, 2>,
    interior_padding = array<i64: 0, 0>}> : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x5xf32>
  %t = "stablehlo.add"(%qa, %qb) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %s, %t : tensor<4x6xf32>, tensor<4x5xf32>
}

// -----

// The columns 4..8 of a @ w are a @ w[:, 4:8]: the slice moves onto the operand it cuts (here
// the gradient's w^T, so w's rows), and the product computes only what is kept.
// CHECK-LABEL: sym_name = "slice_of_matmul"
// CHECK:       ^bb0(%[[G:.*]]: tensor<3x16xf32>, %[[W:.*]]: tensor<8x16xf32>):
// CHECK-NEXT:    %[[S:.*]] = "stablehlo.slice"(%[[W]]) <{limit_indices = array<i64: 8, 16>, start_indices = array<i64: 4, 0>, strides = array<i64: 1, 1>}>
// CHECK-NEXT:    %[[D:.*]] = "stablehlo.dot_general"(%[[G]], %[[S]])
// CHECK-SAME:    (tensor<3x16xf32>, tensor<4x16xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    "func.return"(%[[D]])
func.func @slice_of_matmul(%g: tensor<3x16xf32>, %w: tensor<8x16xf32>) -> tensor<3x4xf32> {
  %d = "stablehlo.dot_general"(%g, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
    rhs_contracting_dimensions = [1]>}> : (tensor<3x16xf32>, tensor<8x16xf32>) -> tensor<3x8xf32>
  %s = "stablehlo.slice"(%d) <{start_indices = array<i64: 0, 4>, limit_indices = array<i64: 3, 8>,
    strides = array<i64: 1, 1>}> : (tensor<3x8xf32>) -> tensor<3x4xf32>
  return %s : tensor<3x4xf32>
}
