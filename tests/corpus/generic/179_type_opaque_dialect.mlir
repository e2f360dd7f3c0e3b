"builtin.module"() ({
  %0:6 = "test.op"() : () -> (!foo.bar, !foo<"x">, !foo.bar<1, [2]>, !foo.bar, !foo.bar<1>, !foo.b<"a\"<b">)
  %1:4 = "test.op"() : () -> (!foo.bar<{a = 1}, (x), [<>]>, !foo.baz<i32, tensor<4xf32>>, !tf.string, !a.b.c)
}) : () -> ()
