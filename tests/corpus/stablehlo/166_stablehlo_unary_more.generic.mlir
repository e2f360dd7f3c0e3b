"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.logistic"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.round_nearest_afz"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.cbrt"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.tan"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.exponential"(%arg0) <{result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}> : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.log"(%arg0) <{result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>}> : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "stablehlo.sine"(%arg0) {tag = 1 : i32} : (tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.abs"(%arg0) : (tensor<4xf32>) -> tensor<?xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
