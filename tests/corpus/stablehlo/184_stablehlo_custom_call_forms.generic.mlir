"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.custom_call"(%arg0) <{call_target_name = "foo"}> : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.custom_call"(%arg0) <{api_version = 4 : i32, backend_config = {a = 1 : i64}, call_target_name = "bar", has_side_effect = true}> : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.custom_call"() <{call_target_name = "baz", called_computations = [@foo]}> : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
