// RUN: loom-opt %s --pass-pipeline='builtin.module(lower-stop-gradient)' | FileCheck %s
// RUN: loom-opt %s --pass-pipeline='builtin.module(canonicalize,cse)' | FileCheck %s --check-prefix=KEEP

// After differentiation, lower-stop-gradient makes each `ad.stop_gradient` its operand: a pure
// StableHLO program with the same values (tests/frontend/test_stop_gradient.py runs both on the
// executors). canonicalize and cse keep the marker: it is what the gradient of an optimized
// program reads.

// CHECK-LABEL: func.func @main(%arg0: tensor<4xf32>)
// CHECK-NOT:     ad.stop_gradient
// CHECK:         %[[SIN:.*]] = stablehlo.sine %arg0
// CHECK-NEXT:    %[[COS:.*]] = stablehlo.cosine %arg0
// CHECK-NEXT:    stablehlo.multiply %[[SIN]], %[[COS]] : tensor<4xf32>
// CHECK-LABEL: func.func @of_an_argument(%arg0: tensor<3xf32>)
// CHECK-NEXT:    %[[M:.*]] = stablehlo.multiply %arg0, %arg0 : tensor<3xf32>
// CHECK-NEXT:    return %[[M]]

// KEEP-LABEL:  func.func @main(
// KEEP:          %[[COS:.*]] = stablehlo.cosine %arg0
// KEEP-NEXT:     %[[STOP:.*]] = "ad.stop_gradient"(%[[COS]]) : (tensor<4xf32>) -> tensor<4xf32>
// KEEP-NEXT:     stablehlo.multiply %{{.*}}, %[[STOP]]
// KEEP-LABEL:  func.func @of_an_argument(
// KEEP-NEXT:     %[[STOP:.*]] = "ad.stop_gradient"(%arg0)
// KEEP-NEXT:     stablehlo.multiply %[[STOP]], %arg0

func.func @main(%arg0: tensor<4xf32>) -> tensor<f32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.sine %arg0 : tensor<4xf32>
  %1 = stablehlo.cosine %arg0 : tensor<4xf32>
  %2 = "ad.stop_gradient"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.multiply %0, %2 : tensor<4xf32>
  %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %4 : tensor<f32>
}
func.func @of_an_argument(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ad.stop_gradient"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = stablehlo.multiply %0, %arg0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
