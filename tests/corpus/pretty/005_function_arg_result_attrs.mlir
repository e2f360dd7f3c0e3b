module {
  func.func @attrs(%arg0: i32 {my.arg, my.n = 1 : i64}, %arg1: f32) -> (i32 {my.res = "r"}, f32) attributes {my.fn} {
    return %arg0, %arg1 : i32, f32
  }
  func.func private @decl_attrs(i32 {my.arg}) -> (i64 {my.res})
}
