"builtin.module"() ({
  "func.func"() <{function_type = (i32, f32) -> i32, sym_name = "dead"}> ({
  ^bb0(%arg0: i32, %arg1: f32):
    "func.return"(%arg0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
