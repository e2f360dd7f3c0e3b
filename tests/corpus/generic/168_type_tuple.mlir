"builtin.module"() ({
  %0:4 = "test.op"() : () -> (tuple<>, tuple<i32>, tuple<i32, f32>, tuple<tuple<i1>, tensor<2xi8>>)
}) : () -> ()
