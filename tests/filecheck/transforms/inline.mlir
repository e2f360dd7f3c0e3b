// RUN: loom-opt %s --mlir-print-debuginfo --pass-pipeline='builtin.module(inline{default-pipeline=})' | FileCheck %s
// RUN: loom-opt %s --pass-pipeline='builtin.module(inline{op-pipelines=func.func(cse) default-pipeline=})' | FileCheck %s --check-prefix=CSE

// Callees are inlined first (mid absorbs leaf, then top absorbs mid); the private leaf, inlined
// everywhere, is erased. Inlined ops get `callsite(callee_loc at call_loc)` locations, nested for
// nested inlining. (What MLIR's inliner does on the same program is checked against jaxlib in
// tests/transforms/test_passes.py; jaxlib cannot inline func.call, so these hand-derived
// expectations are loom's.)

// CHECK-NOT:   @leaf
// CHECK-LABEL: func.func @mid(
// CHECK-LABEL: func.func @top(
// CHECK-NEXT:    %[[A:[0-9]+]] = arith.addi %arg0, %arg0 : i32 loc(#[[TOP1:loc[0-9]+]])
// CHECK-NEXT:    %[[B:[0-9]+]] = arith.addi %[[A]], %[[A]] : i32 loc(#[[TOP2:loc[0-9]+]])
// CHECK-NEXT:    return %[[B]] : i32
// CHECK:       #[[ADD:loc[0-9]+]] = loc("add")
// CHECK-NEXT:  #[[CALL1:loc[0-9]+]] = loc("call1")
// CHECK-NEXT:  #[[CALL2:loc[0-9]+]] = loc("call2")
// CHECK:       #[[CALL3:loc[0-9]+]] = loc("call3")
// CHECK:       #[[MID1:loc[0-9]+]] = loc(callsite(#[[ADD]] at #[[CALL1]]))
// CHECK-NEXT:  #[[MID2:loc[0-9]+]] = loc(callsite(#[[ADD]] at #[[CALL2]]))
// CHECK-NEXT:  #[[TOP1]] = loc(callsite(#[[MID1]] at #[[CALL3]]))
// CHECK-NEXT:  #[[TOP2]] = loc(callsite(#[[MID2]] at #[[CALL3]]))

// With op-pipelines, func.func callables run cse instead of the default canonicalize: every
// call is still inlined.
// CSE-NOT:     func.call
// CSE-NOT:     call @
// CSE-LABEL:   func.func @top(
// CSE-NEXT:      arith.addi
// CSE-NEXT:      arith.addi
// CSE-NEXT:      return

func.func private @leaf(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32 loc("add")
  return %0 : i32
}
func.func @mid(%a: i32) -> i32 {
  %0 = call @leaf(%a) : (i32) -> i32 loc("call1")
  %1 = call @leaf(%0) : (i32) -> i32 loc("call2")
  return %1 : i32
}
func.func @top(%a: i32) -> i32 {
  %0 = call @mid(%a) : (i32) -> i32 loc("call3")
  return %0 : i32
}
