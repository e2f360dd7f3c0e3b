"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xcomplex<f32>>) -> (tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4xcomplex<f32>>):
    %3 = "stablehlo.real"(%arg1) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %4 = "stablehlo.imag"(%arg1) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %5 = "stablehlo.add"(%3, %4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %6 = "stablehlo.real"(%arg1) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %7 = "stablehlo.imag"(%arg1) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %8 = "stablehlo.negate"(%7) : (tensor<4xf32>) -> tensor<4xf32>
    %9 = "stablehlo.complex"(%6, %8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
    %10 = "stablehlo.multiply"(%9, %arg1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    %11 = "stablehlo.abs"(%arg1) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %12 = "func.call"(%arg1) <{callee = @angle}> : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    "func.return"(%5, %10, %11, %12) : (tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xcomplex<f32>>) -> tensor<4xf32>, sym_name = "angle", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xcomplex<f32>>):
    %0 = "stablehlo.real"(%arg0) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %1 = "stablehlo.imag"(%arg0) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %2 = "stablehlo.atan2"(%1, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%2) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
