"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8x4xf32>, tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<f32>):
    "sdy.manual_computation"() <{in_shardings = #sdy.sharding_per_value<[]>, manual_axes = #sdy<manual_axes{}>, out_shardings = #sdy.sharding_per_value<[]>}> ({
      "sdy.return"() : () -> ()
    }) : () -> ()
    %0:2 = "sdy.manual_computation"(%arg0, %arg1) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>, <@mesh, []>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>}> ({
    ^bb0(%arg3: tensor<4x4xf32>, %arg4: tensor<f32>):
      "sdy.return"(%arg3, %arg4) : (tensor<4x4xf32>, tensor<f32>) -> ()
    }) {tag = "t"} : (tensor<8x4xf32>, tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>)
    %1 = "sdy.manual_computation"(%0#0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>, manual_axes = #sdy<manual_axes{"x", "y"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}> ({
    ^bb0(%arg2: tensor<4x2xf32>):
      %2 = "sdy.sharding_constraint"(%arg2) <{sharding = #sdy.sharding<@mesh, [{}, {}]>}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
      "sdy.return"(%2) : (tensor<4x2xf32>) -> ()
    }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    "func.return"(%1, %0#1) : (tensor<8x4xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
