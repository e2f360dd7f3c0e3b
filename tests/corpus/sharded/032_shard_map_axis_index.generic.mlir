"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=4]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}], function_type = (tensor<4x8xf32>) -> tensor<4x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x8xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>, manual_axes = #sdy<manual_axes{"x", "y"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}> ({
    ^bb0(%arg1: tensor<2x2xf32>):
      %1 = "stablehlo.constant"() <{value = dense<1> : tensor<ui32>}> : () -> tensor<ui32>
      %2 = "stablehlo.constant"() <{value = dense<4> : tensor<ui32>}> : () -> tensor<ui32>
      %3 = "stablehlo.partition_id"() : () -> tensor<ui32>
      %4 = "stablehlo.divide"(%3, %1) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %5 = "stablehlo.remainder"(%4, %2) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %6 = "stablehlo.convert"(%5) : (tensor<ui32>) -> tensor<i32>
      %7 = "stablehlo.convert"(%6) : (tensor<i32>) -> tensor<f32>
      %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x2xf32>
      %9 = "stablehlo.add"(%arg1, %8) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      "sdy.return"(%9) : (tensor<2x2xf32>) -> ()
    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%0) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
