// RUN: loom-opt %s --pass-pipeline='builtin.module(mpmd-partition)' | FileCheck %s

// A conditional decided on device 0 whose branches live on device 1: device 1 receives the
// decision and runs its own copy of the conditional; device 0, which holds nothing of it, runs
// none. The untaken branch's part is skipped on every device that holds one, so no receive
// waits for a send that will not come.

// CHECK-LABEL: func.func @main_device0
// CHECK:         %[[P:.*]] = stablehlo.compare GT
// CHECK-NEXT:    mpmd.send %[[P]] to 1 channel [[D:[0-9]+]] : tensor<i1>
// CHECK-NOT:     stablehlo.if
// CHECK:         return
// CHECK-LABEL: func.func @main_device1
// CHECK:         %[[Q:.*]] = mpmd.recv from 0 channel [[D]] : tensor<i1>
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.if"(%[[Q]]) ({
// CHECK-NEXT:      stablehlo.multiply
// CHECK-NEXT:      stablehlo.return
// CHECK-NEXT:    }, {
// CHECK-NEXT:      stablehlo.subtract
// CHECK-NEXT:      stablehlo.return
// CHECK-NEXT:    })
// CHECK-NEXT:    return %[[R]]

module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %two = stablehlo.constant dense<2.0> : tensor<4xf32>
    %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] {mpmd.device = 0 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %p = stablehlo.compare GT, %s, %zero, FLOAT {mpmd.device = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %r = "stablehlo.if"(%p) ({
      %a = stablehlo.multiply %x, %two {mpmd.device = 1 : i64} : tensor<4xf32>
      stablehlo.return %a : tensor<4xf32>
    }, {
      %b = stablehlo.subtract %x, %two {mpmd.device = 1 : i64} : tensor<4xf32>
      stablehlo.return %b : tensor<4xf32>
    }) {mpmd.device = 0 : i64} : (tensor<i1>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
