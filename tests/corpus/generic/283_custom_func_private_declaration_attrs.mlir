"builtin.module"() ({
  "func.func"() <{arg_attrs = [{my.arg = 1 : i32}, {}], function_type = (i32, f32) -> i64, res_attrs = [{my.res}], sym_name = "decl", sym_visibility = "private"}> ({
  }) {llvm.emit_c_interface} : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "nested_vis", sym_visibility = "nested"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.arg_info = "x", mhlo.sharding = "{replicated}"}], function_type = (tensor<4xf32>) -> tensor<4xf32>, res_attrs = [{jax.result_info = "out"}], sym_name = "pub", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    "func.return"(%arg0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
