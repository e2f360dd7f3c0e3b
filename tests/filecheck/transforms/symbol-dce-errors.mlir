// RUN: loom-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(symbol-dce))'

// symbol-dce needs a symbol table to run on: a function is not one.
// expected-error @+1 {{does not define a symbol table}}
func.func @f() {
  return
}
