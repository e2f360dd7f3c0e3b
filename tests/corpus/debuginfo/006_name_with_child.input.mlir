"test.a"() : () -> () loc("name"("f.py":1:2))
"test.b"() : () -> () loc("outer"("inner"("f.py":3:4)))
"test.c"() : () -> () loc("n"(unknown))
"test.d"() : () -> () loc("n"(callsite("a" at "b")))
