"builtin.module"() ({
  "test.op"() {a = #foo.bar<1, [2]>, b = #foo<"x">, c = #arith.overflow<none>, d = #foo.bar, e = #foo.bar<1>, f = #foo.baz<{k = v}, (x)>, g = #foo<"quote\" and <angle">, h = #stablehlo<precision DEFAULT>, i = #a.b.c<>, j = #foo.x<"]">} : () -> ()
}) : () -> ()
