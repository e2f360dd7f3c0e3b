module {
  func.func private @ext(i32) -> (i32, i32)
  func.func @callee(%arg0: i32) -> i32 {
    return %arg0 : i32
  }
  func.func @caller(%arg0: i32) -> i32 {
    %0 = call @callee(%arg0) : (i32) -> i32
    %1:2 = call @ext(%0) : (i32) -> (i32, i32)
    call @nothing() : () -> ()
    return %1#1 : i32
  }
  func.func @nothing() {
    return
  }
}
