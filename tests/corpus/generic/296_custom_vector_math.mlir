"builtin.module"() ({
  "func.func"() <{function_type = (vector<4xf32>, f32) -> (vector<4xf32>, f32), sym_name = "vm"}> ({
  ^bb0(%arg0: vector<4xf32>, %arg1: f32):
    %0 = "vector.broadcast"(%arg1) : (f32) -> vector<4xf32>
    %1 = "vector.fma"(%arg0, %0, %arg0) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
    %2 = "vector.reduction"(%1) <{fastmath = #arith.fastmath<none>, kind = #vector.kind<add>}> : (vector<4xf32>) -> f32
    %3 = "math.exp"(%1) <{fastmath = #arith.fastmath<none>}> : (vector<4xf32>) -> vector<4xf32>
    %4 = "math.tanh"(%2) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
    "func.return"(%3, %4) : (vector<4xf32>, f32) -> ()
  }) : () -> ()
}) : () -> ()
