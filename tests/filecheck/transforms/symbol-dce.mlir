// RUN: loom-opt %s --allow-unregistered-dialect --pass-pipeline='builtin.module(symbol-dce)' | FileCheck %s

// Private and nested symbols die unless referenced, transitively from live ops; public ones stay;
// a nested reference cannot reach a private symbol; unreferenced symbol tables go whole. (The
// whole result is compared with MLIR's through jaxlib in tests/transforms/test_passes.py; these
// are the symbols it keeps, by hand.)

// CHECK:       module @inner {
// CHECK-NEXT:    func.func @used_pub()
// CHECK:         func.func nested @used_nested()
// CHECK-NOT:     @used_priv()
// CHECK:         func.func @unused_pub()
// CHECK-NOT:     @unused_nested()
// CHECK-NOT:     @unused_priv()
// CHECK-NOT:     @inner_nested
// CHECK-NOT:     @a()
// CHECK-NOT:     @inner_private
// CHECK-NOT:     @b()
// CHECK-NOT:     @top_nested()
// CHECK:       func.func nested @top_nested_used()
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @pub()
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @entry()
// CHECK:       func.func private @reached()
// CHECK:       func.func private @transitive()
// CHECK:       func.func private @deep()
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  "test.user"

module @inner {
  func.func @used_pub() {
    return
  }
  func.func nested @used_nested() {
    return
  }
  func.func private @used_priv() {
    return
  }
  func.func @unused_pub() {
    return
  }
  func.func nested @unused_nested() {
    return
  }
  func.func private @unused_priv() {
    return
  }
}
module @inner_nested attributes {sym_visibility = "nested"} {
  func.func @a() {
    return
  }
}
module @inner_private attributes {sym_visibility = "private"} {
  func.func private @b() {
    return
  }
}
func.func nested @top_nested() {
  return
}
func.func nested @top_nested_used() {
  return
}
func.func @pub() {
  return
}
func.func private @caller() {
  "test.call"() {callee = @callee} : () -> ()
  return
}
func.func private @callee() {
  return
}
func.func @entry() {
  "test.call"() {callee = [@reached, {k = @deep}]} : () -> ()
  return
}
func.func private @reached() {
  "test.call"() {callee = @transitive} : () -> ()
  return
}
func.func private @transitive() {
  return
}
func.func private @deep() {
  return
}
func.func private @cycle1() {
  "test.call"() {callee = @cycle2} : () -> ()
  return
}
func.func private @cycle2() {
  "test.call"() {callee = @cycle1} : () -> ()
  return
}
"test.user"() {ref = [@inner::@used_pub, @inner::@used_nested, @inner::@used_priv, @top_nested_used, {k = @inner_private::@b}]} : () -> ()
