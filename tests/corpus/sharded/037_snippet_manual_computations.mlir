module {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>) {
    sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={} () {
      sdy.return
    } : () -> ()
    %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x", "y"}, {}]>, <@mesh, []>] out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, []>] manual_axes={"x"} (%arg2: tensor<4x4xf32>, %arg3: tensor<f32>) {
      sdy.return %arg2, %arg3 : tensor<4x4xf32>, tensor<f32>
    } {tag = "t"} : (tensor<8x4xf32>, tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>)
    %1 = sdy.manual_computation(%0#0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg2: tensor<4x2xf32>) {
      %2 = sdy.sharding_constraint %arg2 <@mesh, [{}, {}]> : tensor<4x2xf32>
      sdy.return %2 : tensor<4x2xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1, %0#1 : tensor<8x4xf32>, tensor<f32>
  }
}
