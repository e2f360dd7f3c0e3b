"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>) -> (tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>, vector<4xf32>), sym_name = "shaped"}> ({
  ^bb0(%arg0: tensor<2x3xf32>, %arg1: vector<4xi32>, %arg2: tensor<?xi64>):
    %0 = "arith.addf"(%arg0, %arg0) <{fastmath = #arith.fastmath<none>}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "arith.muli"(%arg1, %arg1) <{overflowFlags = #arith.overflow<none>}> : (vector<4xi32>, vector<4xi32>) -> vector<4xi32>
    %2 = "arith.subi"(%arg2, %arg2) <{overflowFlags = #arith.overflow<none>}> : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
    %3 = "arith.sitofp"(%arg1) : (vector<4xi32>) -> vector<4xf32>
    "func.return"(%0, %1, %2, %3) : (tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>, vector<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
