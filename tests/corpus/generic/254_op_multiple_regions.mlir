"builtin.module"() ({
  %0 = "test.def"() : () -> i1
  "test.if"(%0) ({
    "test.then"() : () -> ()
  }, {
    "test.else"() : () -> ()
  }, {
  }) : (i1) -> ()
}) : () -> ()
