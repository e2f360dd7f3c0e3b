"test.a"() : () -> () loc("same":1:1)
"test.b"() : () -> () loc("same":1:1)
"test.c"() : () -> () loc(callsite("same":1:1 at "same":1:1))
"test.d"() : () -> () loc("other")
