"builtin.module"() ({
  %0 = "test.outer"() ({
    %1 = "test.middle"() ({
      %2 = "test.inner"() ({
      ^bb0(%arg0: i8):
        "test.yield"(%arg0) : (i8) -> ()
      }) : () -> i8
      "test.yield"(%2) : (i8) -> ()
    }) : () -> i8
    "test.yield"(%1) : (i8) -> ()
  }) : () -> i8
}) : () -> ()
