func.func @feed() {
  %c2 = arith.constant 2 : i32
  %c5 = arith.constant 5 : i32
  %0 = arith.muli %c2, %c5 : i32
  "test.use"(%0, %c2) : (i32, i32) -> ()
  %1 = arith.addi %0, %c2 : i32
  "test.use"(%1) : (i32) -> ()
  return
}
