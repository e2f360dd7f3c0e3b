func.func private @effect(i32) -> i32
func.func @effects(%x: i32) -> i32 {
  %0 = call @effect(%x) : (i32) -> i32
  %1 = call @effect(%x) : (i32) -> i32
  %2 = "test.unknown"(%x) : (i32) -> i32
  %3 = "test.unknown"(%x) : (i32) -> i32
  "test.sink"() : () -> ()
  %4 = arith.addi %x, %x : i32
  %5 = arith.addi %x, %x : i32
  return %5 : i32
}
