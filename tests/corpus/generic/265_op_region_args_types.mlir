"builtin.module"() ({
  "test.op"() ({
  ^bb0(%arg0: tensor<?x4xf32>, %arg1: memref<*xi8>, %arg2: !foo.bar<1>, %arg3: vector<[4]xi1>, %arg4: tuple<>, %arg5: none):
    "test.yield"() : () -> ()
  }) : () -> ()
}) : () -> ()
