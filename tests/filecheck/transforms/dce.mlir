// RUN: loom-opt %s --allow-unregistered-dialect --mlir-print-op-generic --pass-pipeline='builtin.module(dce)' | FileCheck %s

// Ops without uses and without effects go, and with them the operands that die with them; an op
// with unknown effects stays; unreachable blocks go whole.

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "func.func"() <{function_type = (i32, i1) -> i32, sym_name = "f"}> ({
// CHECK-NEXT:   ^bb0(%arg0: i32, %arg1: i1):
// CHECK-NEXT:     %0 = "test.effects"(%arg0) : (i32) -> i32
// CHECK-NEXT:     %1 = "arith.addi"(%0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
// CHECK-NEXT:     "test.br"()[^bb1] : () -> ()
// CHECK-NEXT:   ^bb1:  // pred: ^bb0
// CHECK-NEXT:     "func.return"(%1) : (i32) -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT:  {{.}}
"func.func"() <{function_type = (i32, i1) -> i32, sym_name = "f"}> ({
^bb0(%a: i32, %p: i1):
  %0 = "arith.addi"(%a, %a) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
  %1 = "arith.muli"(%0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
  %2 = "arith.subi"(%1, %a) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
  %3 = "test.effects"(%a) : (i32) -> i32
  %4 = "arith.addi"(%3, %a) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
  "test.br"()[^bb1] : () -> ()
^bb1:
  "func.return"(%4) : (i32) -> ()
^bb2:
  %5 = "arith.addi"(%a, %a) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
  "test.br"()[^bb3] : () -> ()
^bb3:
  "test.br"()[^bb2] : () -> ()
}) : () -> ()
