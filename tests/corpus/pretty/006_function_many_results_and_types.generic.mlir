"builtin.module"() ({
  "func.func"() <{function_type = (index, i1, f16, bf16, tensor<4xf32>, vector<2xi8>, tensor<*xi32>, memref<?xf32>) -> (index, i1, f16, bf16, tensor<4xf32>, vector<2xi8>, tensor<*xi32>, memref<?xf32>), sym_name = "types"}> ({
  ^bb0(%arg0: index, %arg1: i1, %arg2: f16, %arg3: bf16, %arg4: tensor<4xf32>, %arg5: vector<2xi8>, %arg6: tensor<*xi32>, %arg7: memref<?xf32>):
    "func.return"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) : (index, i1, f16, bf16, tensor<4xf32>, vector<2xi8>, tensor<*xi32>, memref<?xf32>) -> ()
  }) : () -> ()
}) : () -> ()
