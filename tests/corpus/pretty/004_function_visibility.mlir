module {
  func.func public @pub() {
    return
  }
  func.func private @priv() {
    return
  }
  func.func nested @nest() {
    return
  }
  func.func private @decl(i32, f32) -> i64
}
