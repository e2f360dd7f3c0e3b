module @outer {
  module @inner attributes {my.attr} {
    func.func @f() {
      return
    }
  }
  func.func @g() {
    return
  }
}
