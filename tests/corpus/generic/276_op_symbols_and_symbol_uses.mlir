"builtin.module"() ({
  "test.symbol"() <{sym_name = "f", sym_visibility = "nested"}> ({
  }) : () -> ()
  "test.call"() {callee = @f, nested = @m::@f} : () -> ()
}) : () -> ()
