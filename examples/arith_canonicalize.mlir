// The program `loom demo` optimises: constants that fold, an expression computed twice and a
// private function nobody calls. Run it yourself with
//   loom-opt examples/arith_canonicalize.mlir \
//     --pass-pipeline='builtin.module(func.func(canonicalize,cse),symbol-dce)'
module {
  func.func @main(%x: i32) -> i32 {
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %c6 = arith.muli %c2, %c3 : i32        // folds to the constant 6
    %a = arith.addi %x, %c6 : i32
    %b = arith.addi %x, %c6 : i32          // the same expression as %a: CSE merges them
    %prod = arith.muli %a, %b : i32
    %c0 = arith.constant 0 : i32
    %r = arith.addi %prod, %c0 : i32       // adding zero folds away
    return %r : i32
  }

  func.func private @unused_helper(%y: i32) -> i32 {   // private and never called: symbol-dce erases it
    %c1 = arith.constant 1 : i32
    %z = arith.addi %y, %c1 : i32
    return %z : i32
  }
}
