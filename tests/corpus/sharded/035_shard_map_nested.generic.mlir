"builtin.module"() <{sym_name = "jit_outer"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=4]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}], function_type = (tensor<4x8xf32>) -> tensor<4x2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x8xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>}> ({
    ^bb0(%arg1: tensor<2x8xf32>):
      %1 = "sdy.manual_computation"(%arg1) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>, manual_axes = #sdy<manual_axes{"y"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>}> ({
      ^bb0(%arg2: tensor<2x2xf32>):
        %7 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
        ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
          %8 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
          "stablehlo.return"(%8) : (tensor<f32>) -> ()
        }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
        "sdy.return"(%7) : (tensor<2x2xf32>) -> ()
      }) : (tensor<2x8xf32>) -> tensor<2x2xf32>
      %2 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x2xf32>
      %4 = "sdy.sharding_constraint"(%3) <{sharding = #sdy.sharding<@mesh, [{?}, {?}]>}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %5 = "stablehlo.add"(%1, %4) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %6 = "sdy.sharding_constraint"(%5) <{sharding = #sdy.sharding<@mesh, [{?}, {?}]>}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
      "sdy.return"(%6) : (tensor<2x2xf32>) -> ()
    }) : (tensor<4x8xf32>) -> tensor<4x2xf32>
    "func.return"(%0) : (tensor<4x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
