"builtin.module"() <{sym_name = "outer"}> ({
  "builtin.module"() <{sym_name = "inner"}> ({
    "func.func"() <{function_type = () -> (), sym_name = "f"}> ({
      "func.return"() : () -> ()
    }) : () -> ()
  }) {my.attr} : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "g"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
