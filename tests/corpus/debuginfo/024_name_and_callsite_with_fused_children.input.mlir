"test.a"() : () -> () loc("n"(fused["a", "b"]))
"test.b"() : () -> () loc(callsite(fused["a", "b"] at "c"))
"test.c"() : () -> () loc(fused<"m">[callsite("a" at "b"), "n"("a")])
