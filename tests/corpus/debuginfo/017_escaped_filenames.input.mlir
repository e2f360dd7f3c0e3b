"test.a"() : () -> () loc("we\"ird\nname":1:2)
"test.b"() : () -> () loc("caf\C3\A9 ☃")
"test.c"() : () -> () loc("tab\there"("x\\y":3:4))
