"test.a"() : () -> () loc("f.py":1:2 to :5)
"test.b"() : () -> () loc("f.py":1:2 to 3:4)
"test.c"() : () -> () loc("f.py":7)
"test.d"() : () -> () loc("f.py":1:2 to 1:2)
