"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>):
    %0 = "stablehlo.exponential"(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
    %1 = "stablehlo.add"(%0, %arg1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "func.return"(%1) : (tensor<16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
