// RUN: loom-opt %s --pass-pipeline='builtin.module(mpmd-partition{parallel-iterations=2})' | FileCheck %s

// A loop whose predicate and first stage are on device 0 and whose second stage is on device 1:
// each device runs its own copy of the loop with an iteration counter; device 0 sends the
// predicate to device 1 in every iteration, and the first stage's value, tagged with the
// iteration; the carry lives on the device that computes its next value. With 2 iterations in
// flight the predicate rides on the stage's message (mpmd.rides / mpmd.carries): one message, not two.

// CHECK-LABEL: func.func @main_device0(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<i32>
// CHECK-SAME:    attributes {mpmd.device = 0 : i64, mpmd.results = array<i64: 0>}
// CHECK:         stablehlo.while(%[[I:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}) : tensor<i32>, tensor<i32>
// CHECK:         cond {
// CHECK-NEXT:      %[[P:.*]] = stablehlo.compare LT, %[[N]], %arg1
// CHECK-NEXT:      mpmd.send %[[P]] to 1 channel [[PRED:[0-9]+]] iteration %[[I]] {mpmd.rides = [[STAGE:[0-9]+]] : i64} : tensor<i1>, tensor<i32>
// CHECK-NEXT:      stablehlo.return %[[P]]
// CHECK:         } do {
// CHECK-NEXT:      mpmd.iteration %[[I]] loop 0 devices [0, 1] parallel 2 : tensor<i32>
// CHECK-NEXT:      %[[X:.*]] = mpmd.recv from 1 channel [[CARRY:[0-9]+]] iteration %[[I]] : tensor<4xf32>, tensor<i32>
// CHECK-NEXT:      %[[T:.*]] = stablehlo.tanh %[[X]]
// CHECK-NEXT:      mpmd.send %[[T]] to 1 channel [[STAGE]] iteration %[[I]] {mpmd.carries = [[PRED]] : i64}
// CHECK-NOT:       stablehlo.multiply
// CHECK:           stablehlo.return
// CHECK-LABEL: func.func @main_device1(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<4xf32>
// CHECK-SAME:    attributes {mpmd.device = 1 : i64, mpmd.results = array<i64: 1>}
// CHECK:         stablehlo.while(%[[J:.*]] = %{{.*}}, %[[Y:.*]] = %arg0) : tensor<i32>, tensor<4xf32>
// CHECK:         cond {
// CHECK-NEXT:      %[[Q:.*]] = mpmd.recv from 0 channel [[PRED]] iteration %[[J]] {mpmd.rides = [[STAGE]] : i64} : tensor<i1>, tensor<i32>
// CHECK-NEXT:      stablehlo.return %[[Q]]
// CHECK:         } do {
// CHECK-NEXT:      mpmd.iteration %[[J]] loop 0 devices [0, 1] parallel 2 : tensor<i32>
// CHECK-NEXT:      mpmd.send %[[Y]] to 0 channel [[CARRY]] iteration %[[J]]
// CHECK-NEXT:      %[[S:.*]] = mpmd.recv from 0 channel [[STAGE]] iteration %[[J]] {mpmd.carries = [[PRED]] : i64}
// CHECK-NEXT:      stablehlo.multiply %[[S]], %[[S]]
// CHECK-NOT:     stablehlo.tanh

module {
  func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<i32>, tensor<4xf32>) {
    %zero = stablehlo.constant {mpmd.device = 0 : i64} dense<0> : tensor<i32>
    %one = stablehlo.constant {mpmd.device = 0 : i64} dense<1> : tensor<i32>
    %r:2 = stablehlo.while(%i = %zero, %y = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n, SIGNED {mpmd.device = 0 : i64} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %t = stablehlo.tanh %y {mpmd.device = 0 : i64} : tensor<4xf32>
      %s = stablehlo.multiply %t, %t {mpmd.device = 1 : i64} : tensor<4xf32>
      %j = stablehlo.add %i, %one {mpmd.device = 0 : i64} : tensor<i32>
      stablehlo.return %j, %s : tensor<i32>, tensor<4xf32>
    }
    return %r#0, %r#1 : tensor<i32>, tensor<4xf32>
  }
}
