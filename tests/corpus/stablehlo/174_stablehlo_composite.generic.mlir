"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg1: tensor<4xf32>):
    %0 = "stablehlo.composite"(%arg1) <{composite_attributes = {k = 1 : i64}, decomposition = @decomp, name = "my.op", version = 1 : i32}> : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.composite"(%arg1) <{decomposition = @decomp, name = "my.op"}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "decomp", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    "func.return"(%arg0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
