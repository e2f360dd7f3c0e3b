"builtin.module"() ({
  "func.func"() <{function_type = (i32, f32) -> (i32, i32, i32, i32, f32, f32), sym_name = "minmax"}> ({
  ^bb0(%arg0: i32, %arg1: f32):
    "func.return"(%arg0, %arg0, %arg0, %arg0, %arg1, %arg1) : (i32, i32, i32, i32, f32, f32) -> ()
  }) : () -> ()
}) : () -> ()
