"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<4x5xf32>, tensor<2xi32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<2xi32>):
    %0 = "stablehlo.einsum"(%arg0, %arg1) <{einsum_config = "ab,bc->ac"}> : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %1 = "stablehlo.unary_einsum"(%arg0) <{einsum_config = "ab->a"}> : (tensor<3x4xf32>) -> tensor<3xf32>
    %2 = "stablehlo.torch_index_select"(%arg0, %arg2) <{batch_dims = 0 : i64, dim = 0 : i64}> : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
