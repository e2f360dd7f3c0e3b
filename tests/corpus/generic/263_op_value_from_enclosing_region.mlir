"builtin.module"() ({
  %0 = "test.def"() : () -> i32
  "test.op"() ({
    "test.op"() ({
      "test.use"(%0) : (i32) -> ()
    }) : () -> ()
  }) : () -> ()
}) : () -> ()
