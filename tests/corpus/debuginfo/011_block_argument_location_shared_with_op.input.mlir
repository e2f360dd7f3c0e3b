"test.func"() ({
^bb0(%a: i32 loc("shared"), %b: i32 loc("shared")):
  "test.use"(%a, %b) : (i32, i32) -> () loc("shared")
}) : () -> ()
