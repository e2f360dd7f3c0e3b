"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>, sym_name = "mesh"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=4, "b"=2]>, sym_name = "mesh_ab"}> {tag = 1 : i64} : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<[]>, sym_name = "empty"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<[], device_ids=[0]>, sym_name = "maximal"}> : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh_ab, [{"a":(1)2}, {"b", ?}p0]>}, {}], function_type = (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>, res_attrs = [{sdy.sharding = #sdy.sharding<@mesh_ab, [{"a":(2)2, "a":(1)2}, {}], replicated={"b"}>}], sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<f32>):
    %0 = "sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {?}], replicated={"y"}>}> {tag} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "sdy.reshard"(%0) <{sharding = #sdy.sharding<mesh<["z"=4]>, [{"z":(1)2}, {}]>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = "sdy.sharding_constraint"(%arg1) <{sharding = #sdy.sharding<@mesh, []>}> : (tensor<f32>) -> tensor<f32>
    %3 = "sdy.sharding_constraint"(%1) <{sharding = #sdy.sharding<@mesh_ab, [{}, {}], unreduced={"a", "b"}>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %4 = "sdy.reshard"(%3) <{sharding = #sdy.sharding<@maximal, []>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    "func.return"(%4) : (tensor<8x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
