"builtin.module"() ({
  %0:3 = "test.op"() : () -> (tensor<4xf32, "enc">, tensor<?x4xf32, #foo.enc<1, 2>>, tensor<8xi8, 42 : i64>)
  %1 = "test.op2"() : () -> tensor<2x2xf32, {a = 1 : i32, b}>
}) : () -> ()
