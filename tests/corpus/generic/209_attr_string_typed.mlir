"builtin.module"() ({
  "test.op"() {a = "x" : i32, b = "y" : !foo.str, c = "z" : tensor<2xi8>} : () -> ()
}) : () -> ()
