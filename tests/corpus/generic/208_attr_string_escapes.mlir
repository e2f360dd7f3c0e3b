"builtin.module"() ({
  "test.op"() {a = "plain", b = "quote\22d", c = "new\0Aline", d = "tab\09here", e = "back\\slash", f = "\01\02\7F\1B", g = "caf\C3\A9", h = "\C3\A9 \E2\98\83 \E6\97\A5\E6\9C\AC", i = "", j = "\00", k = "\FF\FE", l = "a\0Ab\09c", m = "'single'", n = "}{)(][><"} : () -> ()
}) : () -> ()
