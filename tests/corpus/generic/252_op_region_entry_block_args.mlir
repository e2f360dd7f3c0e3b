"builtin.module"() ({
  %0 = "test.op"() ({
  ^bb0(%arg0: i32, %arg1: f32):
    "test.yield"(%arg0) : (i32) -> ()
  }) : () -> i32
}) : () -> ()
