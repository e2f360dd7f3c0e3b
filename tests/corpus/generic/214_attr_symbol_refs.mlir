"builtin.module"() ({
  "test.op"() {a = @a, b = @a::@b::@c, c = @"quoted name", d = @"with\22quote", e = @"0starts_with_digit", f = @under_score, g = @a.b::@"c d", h = @"$dollar", i = @a$b.c_d, j = [@x, @y::@z]} : () -> ()
}) : () -> ()
