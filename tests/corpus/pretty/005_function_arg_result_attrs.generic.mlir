"builtin.module"() ({
  "func.func"() <{arg_attrs = [{my.arg, my.n = 1 : i64}, {}], function_type = (i32, f32) -> (i32, f32), res_attrs = [{my.res = "r"}, {}], sym_name = "attrs"}> ({
  ^bb0(%arg0: i32, %arg1: f32):
    "func.return"(%arg0, %arg1) : (i32, f32) -> ()
  }) {my.fn} : () -> ()
  "func.func"() <{arg_attrs = [{my.arg}], function_type = (i32) -> i64, res_attrs = [{my.res}], sym_name = "decl_attrs", sym_visibility = "private"}> ({
  }) : () -> ()
}) : () -> ()
