"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "pub", sym_visibility = "public"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "priv", sym_visibility = "private"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "nest", sym_visibility = "nested"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = (i32, f32) -> i64, sym_name = "decl", sym_visibility = "private"}> ({
  }) : () -> ()
}) : () -> ()
