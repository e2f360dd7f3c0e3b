"builtin.module"() ({
  "func.func"() <{function_type = () -> f32, sym_name = "rand", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{function_type = () -> f32, sym_name = "chain"}> ({
    %1 = "func.call"() <{callee = @rand}> : () -> f32
    %2 = "func.call"() <{callee = @rand}> : () -> f32
    %3 = "arith.addf"(%1, %2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %4 = "func.call"(%3) <{callee = @square}> : (f32) -> f32
    "func.return"(%4) : (f32) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (f32) -> f32, sym_name = "square"}> ({
  ^bb0(%arg0: f32):
    %0 = "arith.mulf"(%arg0, %arg0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "func.return"(%0) : (f32) -> ()
  }) : () -> ()
}) : () -> ()
