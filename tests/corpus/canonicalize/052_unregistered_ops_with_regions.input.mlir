func.func @regions(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %x, %c0 : i32
  %1 = arith.muli %0, %x : i32
  %2 = "test.region"(%1) ({
  ^bb0(%arg: i32):
    %c0_inner = arith.constant 0 : i32
    %3 = arith.addi %arg, %c0_inner : i32
    %4 = arith.muli %0, %x : i32
    %5 = arith.muli %x, %x : i32
    "test.yield"(%3, %4, %5) : (i32, i32, i32) -> ()
  }) : (i32) -> i32
  return %2 : i32
}
