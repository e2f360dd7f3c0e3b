"builtin.module"() ({
  "func.func"() <{function_type = () -> (f64, f64), sym_name = "fold_f64"}> ({
    %3 = "arith.constant"() <{value = 0.30000000000000004 : f64}> : () -> f64
    %4 = "arith.constant"() <{value = 0x7FF0000000000000 : f64}> : () -> f64
    "func.return"(%3, %4) : (f64, f64) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (f16, f16), sym_name = "fold_f16"}> ({
    %1 = "arith.constant"() <{value = 2.998050e-01 : f16}> : () -> f16
    %2 = "arith.constant"() <{value = 0x7C00 : f16}> : () -> f16
    "func.return"(%1, %2) : (f16, f16) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> bf16, sym_name = "fold_bf16"}> ({
    %0 = "arith.constant"() <{value = 9.960930e-01 : bf16}> : () -> bf16
    "func.return"(%0) : (bf16) -> ()
  }) : () -> ()
}) : () -> ()
