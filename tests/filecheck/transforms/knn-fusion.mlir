// RUN: loom-opt %s --pass-pipeline='builtin.module(func.func(knn-fusion))' | FileCheck %s

// knn-fusion turns a top-k over the scores of a matrix product (inner product, or L2 through
// half the squared norms minus the product) into one knn.fused_score_top_k, so the score matrix
// never exists; it leaves the program alone when the scores are used elsewhere or the top-k runs
// over the query axis. (The programs are loom.jit traces of lax.approx_max_k / approx_min_k;
// tests/lax/test_approx_topk.py checks the fused results against the unfused ones.)

// CHECK-LABEL: func.func @ip(
// CHECK-NEXT:    %values, %indices = "knn.fused_score_top_k"(%arg0, %arg1)
// CHECK-SAME:      is_max_k = true, k = 5 : i64, metric = "ip"
// CHECK-SAME:      (tensor<4x8xf32>, tensor<300x8xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
// CHECK-NEXT:    return %values, %indices

// CHECK-LABEL: func.func @l2(
// CHECK-NOT:     stablehlo.dot_general
// CHECK:         %[[HALF:.*]] = stablehlo.multiply %cst, %{{.*}} : tensor<300xf32>
// CHECK-NEXT:    %values, %indices = "knn.fused_score_top_k"(%arg0, %arg1, %[[HALF]])
// CHECK-SAME:      is_max_k = false, k = 5 : i64, metric = "l2"
// CHECK-NEXT:    return %values, %indices

// CHECK-LABEL: func.func @shared_scores(
// CHECK:         %[[S:.*]] = stablehlo.dot_general
// CHECK-NEXT:    "knn.approx_top_k"(%[[S]])
// CHECK-NEXT:    return %indices, %[[S]]

// CHECK-LABEL: func.func @over_queries(
// CHECK:         stablehlo.dot_general
// CHECK-NEXT:    "knn.approx_top_k"
// CHECK-SAME:      reduction_dimension = 0 : i64
// CHECK-NOT:     knn.fused_score_top_k

func.func @ip(%arg0: tensor<4x8xf32>, %arg1: tensor<300x8xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>) {
  %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<300x8xf32>) -> tensor<8x300xf32>
  %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x300xf32>) -> tensor<4x300xf32>
  %values, %indices = "knn.approx_top_k"(%1) <{aggregate_to_topk = true, is_max_k = true, k = 5 : i64, recall_target = 0.949999988 : f32, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64}> : (tensor<4x300xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
  return %values, %indices : tensor<4x5xf32>, tensor<4x5xi32>
}
func.func @l2(%arg0: tensor<4x8xf32>, %arg1: tensor<300x8xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>) {
  %cst = stablehlo.constant dense<5.000000e-01> : tensor<300xf32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.multiply %arg1, %arg1 : tensor<300x8xf32>
  %1 = stablehlo.reduce(%0 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<300x8xf32>, tensor<f32>) -> tensor<300xf32>
  %2 = stablehlo.multiply %cst, %1 : tensor<300xf32>
  %3 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<300x8xf32>) -> tensor<8x300xf32>
  %4 = stablehlo.dot_general %arg0, %3, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x300xf32>) -> tensor<4x300xf32>
  %5 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<300xf32>) -> tensor<4x300xf32>
  %6 = stablehlo.subtract %5, %4 : tensor<4x300xf32>
  %values, %indices = "knn.approx_top_k"(%6) <{aggregate_to_topk = true, is_max_k = false, k = 5 : i64, recall_target = 0.899999976 : f32, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64}> : (tensor<4x300xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
  return %values, %indices : tensor<4x5xf32>, tensor<4x5xi32>
}
func.func @shared_scores(%arg0: tensor<4x8xf32>, %arg1: tensor<300x8xf32>) -> (tensor<4x5xi32>, tensor<4x300xf32>) {
  %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<300x8xf32>) -> tensor<8x300xf32>
  %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x300xf32>) -> tensor<4x300xf32>
  %values, %indices = "knn.approx_top_k"(%1) <{aggregate_to_topk = true, is_max_k = true, k = 5 : i64, recall_target = 0.949999988 : f32, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64}> : (tensor<4x300xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
  return %indices, %1 : tensor<4x5xi32>, tensor<4x300xf32>
}
func.func @over_queries(%arg0: tensor<4x8xf32>, %arg1: tensor<300x8xf32>) -> tensor<2x300xi32> {
  %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<300x8xf32>) -> tensor<8x300xf32>
  %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x300xf32>) -> tensor<4x300xf32>
  %values, %indices = "knn.approx_top_k"(%1) <{aggregate_to_topk = true, is_max_k = true, k = 2 : i64, recall_target = 0.949999988 : f32, reduction_dimension = 0 : i64, reduction_input_size_override = -1 : i64}> : (tensor<4x300xf32>) -> (tensor<2x300xf32>, tensor<2x300xi32>)
  return %indices : tensor<2x300xi32>
}
