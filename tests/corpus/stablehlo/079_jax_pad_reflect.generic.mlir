"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<4xf32>):
    %7 = "func.call"(%arg2) <{callee = @_pad}> : (tensor<4xf32>) -> tensor<8xf32>
    "func.return"(%7) : (tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<8xf32>, sym_name = "_pad", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<4xf32>):
    %1 = "stablehlo.slice"(%arg1) <{limit_indices = array<i64: 3>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<2xf32>
    %2 = "func.call"(%1) <{callee = @_flip}> : (tensor<2xf32>) -> tensor<2xf32>
    %3 = "stablehlo.concatenate"(%2, %arg1) <{dimension = 0 : i64}> : (tensor<2xf32>, tensor<4xf32>) -> tensor<6xf32>
    %4 = "stablehlo.slice"(%3) <{limit_indices = array<i64: 5>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<6xf32>) -> tensor<2xf32>
    %5 = "func.call"(%4) <{callee = @_flip}> : (tensor<2xf32>) -> tensor<2xf32>
    %6 = "stablehlo.concatenate"(%3, %5) <{dimension = 0 : i64}> : (tensor<6xf32>, tensor<2xf32>) -> tensor<8xf32>
    "func.return"(%6) : (tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "_flip", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
