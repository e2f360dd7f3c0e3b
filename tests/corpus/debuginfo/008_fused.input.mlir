"test.a"() : () -> () loc(fused["a", "b"])
"test.b"() : () -> () loc(fused<"meta">["a":1:1, "b"])
"test.c"() : () -> () loc(fused<#foo.meta<1>>["x", "y":2:3])
"test.d"() : () -> () loc(fused<{k = 1 : i32}>["z"])
