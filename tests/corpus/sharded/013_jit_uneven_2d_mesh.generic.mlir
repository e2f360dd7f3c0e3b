"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=4]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}} : () -> ()
  "func.func"() <{function_type = (tensor<3x10xf32>) -> tensor<3x10xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg4: tensor<3x10xf32>):
    %5 = "sdy.sharding_constraint"(%arg4) <{sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}> : (tensor<3x10xf32>) -> tensor<3x10xf32>
    %6 = "func.call"(%5) <{callee = @cumsum}> : (tensor<3x10xf32>) -> tensor<3x10xf32>
    "func.return"(%6) : (tensor<3x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x10xf32>) -> tensor<3x10xf32>, sym_name = "cumsum", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3x10xf32>):
    %4 = "func.call"(%arg3) <{callee = @cumsum_0}> : (tensor<3x10xf32>) -> tensor<3x10xf32>
    "func.return"(%4) : (tensor<3x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x10xf32>) -> tensor<3x10xf32>, sym_name = "cumsum_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x10xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.reduce_window"(%arg0, %1) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [9, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 10>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%3) : (tensor<f32>) -> ()
    }) : (tensor<3x10xf32>, tensor<f32>) -> tensor<3x10xf32>
    "func.return"(%2) : (tensor<3x10xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
