module {
  sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>
  sdy.mesh @mesh_ab = <["a"=4, "b"=2]> {tag = 1 : i64}
  sdy.mesh @empty = <[]>
  sdy.mesh @maximal = <[], device_ids=[0]>
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_ab, [{"a":(1)2}, {"b", ?}p0]>}, %arg1: tensor<f32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_ab, [{"a":(2)2, "a":(1)2}, {}], replicated={"b"}>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x", ?}p1, {?}], replicated={"y"}> {tag} : tensor<8x4xf32>
    %1 = sdy.reshard %0 <mesh<["z"=4]>, [{"z":(1)2}, {}]> : tensor<8x4xf32>
    %2 = sdy.sharding_constraint %arg1 <@mesh, []> : tensor<f32>
    %3 = sdy.sharding_constraint %1 <@mesh_ab, [{}, {}], unreduced={"a", "b"}> : tensor<8x4xf32>
    %4 = sdy.reshard %3 <@maximal, []> : tensor<8x4xf32>
    return %4 : tensor<8x4xf32>
  }
}
