"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x4xi32>, tensor<4xi32>, tensor<2x4xi1>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x4xi32>, %arg1: tensor<4xi32>, %arg2: tensor<2x4xi1>):
    %0 = "chlo.broadcast_and"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    %1 = "chlo.broadcast_or"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    %2 = "chlo.broadcast_xor"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    %3 = "chlo.broadcast_shift_left"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    %4 = "chlo.broadcast_shift_right_arithmetic"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    %5 = "chlo.broadcast_shift_right_logical"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    %6 = "chlo.broadcast_select"(%arg2, %arg0, %arg1) : (tensor<2x4xi1>, tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
