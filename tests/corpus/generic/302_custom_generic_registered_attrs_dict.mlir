"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "in_attr_dict", sym_visibility = "private"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
  %0 = "arith.constant"() <{value = 5 : i32}> : () -> i32
}) : () -> ()
