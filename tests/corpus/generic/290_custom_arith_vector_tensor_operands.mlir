"builtin.module"() ({
  "func.func"() <{function_type = (vector<4xi32>, tensor<2x?xf32>) -> (vector<4xi32>, tensor<2x?xf32>, vector<4xi1>), sym_name = "shaped"}> ({
  ^bb0(%arg0: vector<4xi32>, %arg1: tensor<2x?xf32>):
    %0 = "arith.addi"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (vector<4xi32>, vector<4xi32>) -> vector<4xi32>
    %1 = "arith.mulf"(%arg1, %arg1) <{fastmath = #arith.fastmath<none>}> : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
    %2 = "arith.cmpi"(%arg0, %0) <{predicate = 0 : i64}> : (vector<4xi32>, vector<4xi32>) -> vector<4xi1>
    "func.return"(%0, %1, %2) : (vector<4xi32>, tensor<2x?xf32>, vector<4xi1>) -> ()
  }) : () -> ()
}) : () -> ()
