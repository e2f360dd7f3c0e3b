"builtin.module"() ({
  "test.op"() ({
    %0 = "test.def"() : () -> i32
    "test.yield"(%0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
