"test.a"() : () -> () loc(callsite("callee" at "caller"))
"test.b"() : () -> () loc(callsite("f.py":1:1 at callsite("g.py":2:2 at "h.py":3:3)))
"test.c"() : () -> () loc(callsite(callsite("a" at "b") at "c"))
"test.d"() : () -> () loc(callsite(unknown at "x"))
