"test.func"() ({
^bb0(%a: i32 loc("arg_a"), %b: f32 loc("f.py":9:9), %c: i1):
  "test.br"(%a)[^bb1] : (i32) -> () loc("br")
^bb1(%d: i32 loc(fused["x", "y"]), %e: i64 loc(unknown)):
  "test.return"() : () -> () loc("ret")
}) : () -> () loc("func")
