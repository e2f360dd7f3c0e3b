"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=8]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}} : () -> ()
  "func.func"() <{function_type = (tensor<7x5xf32>, tensor<7x5xf32>) -> tensor<7x5xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<7x5xf32>, %arg1: tensor<7x5xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<7x5xf32>, tensor<7x5xf32>) -> tensor<7x5xf32>
    %1 = "sdy.sharding_constraint"(%0) <{sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}> : (tensor<7x5xf32>) -> tensor<7x5xf32>
    %2 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<7x5xf32>
    %4 = "stablehlo.add"(%1, %3) : (tensor<7x5xf32>, tensor<7x5xf32>) -> tensor<7x5xf32>
    "func.return"(%4) : (tensor<7x5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
