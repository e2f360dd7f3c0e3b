"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<3xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg20: tensor<3x4xf32>):
    %52 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %53 = "stablehlo.reduce"(%arg20, %52) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %60 = "stablehlo.add"(%arg21, %arg22) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%60) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<f32>
    %54 = "stablehlo.constant"() <{value = dense<1.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %55 = "stablehlo.divide"(%53, %54) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %56 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %57 = "func.call"(%arg20, %56) <{callee = @_var}> : (tensor<3x4xf32>, tensor<i64>) -> tensor<4xf32>
    %58 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %59 = "func.call"(%arg20, %58) <{callee = @_std}> : (tensor<3x4xf32>, tensor<i64>) -> tensor<3xf32>
    "func.return"(%55, %57, %59) : (tensor<f32>, tensor<4xf32>, tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<i64>) -> tensor<4xf32>, sym_name = "_var", sym_visibility = "private"}> ({
  ^bb0(%arg14: tensor<3x4xf32>, %arg15: tensor<i64>):
    %30 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %31 = "stablehlo.reduce"(%arg14, %30) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg18: tensor<f32>, %arg19: tensor<f32>):
      %51 = "stablehlo.add"(%arg18, %arg19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%51) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %33 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x4xf32>
    %35 = "stablehlo.divide"(%32, %34) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<3x4xf32>
    %37 = "stablehlo.subtract"(%arg14, %36) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %38 = "chlo.square"(%37) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %39 = "stablehlo.convert"(%arg15) : (tensor<i64>) -> tensor<f32>
    %40 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %41 = "stablehlo.subtract"(%40, %39) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %42 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %43 = "stablehlo.reduce"(%38, %42) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
      %50 = "stablehlo.add"(%arg16, %arg17) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%50) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
    %44 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %45 = "stablehlo.divide"(%43, %44) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %46 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %47 = "stablehlo.compare"(%41, %46) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %48 = "stablehlo.constant"() <{value = dense<0x7FF8000000000000> : tensor<f64>}> : () -> tensor<f64>
    %49 = "func.call"(%47, %45, %48) <{callee = @_where}> : (tensor<i1>, tensor<4xf32>, tensor<f64>) -> tensor<4xf32>
    "func.return"(%49) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i1>, tensor<4xf32>, tensor<f64>) -> tensor<4xf32>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg11: tensor<i1>, %arg12: tensor<4xf32>, %arg13: tensor<f64>):
    %27 = "stablehlo.convert"(%arg13) : (tensor<f64>) -> tensor<f32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %29 = "stablehlo.select"(%arg11, %arg12, %28) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%29) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<i64>) -> tensor<3xf32>, sym_name = "_std", sym_visibility = "private"}> ({
  ^bb0(%arg9: tensor<3x4xf32>, %arg10: tensor<i64>):
    %25 = "func.call"(%arg9, %arg10) <{callee = @_var_0}> : (tensor<3x4xf32>, tensor<i64>) -> tensor<3xf32>
    %26 = "stablehlo.sqrt"(%25) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%26) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>, tensor<i64>) -> tensor<3xf32>, sym_name = "_var_0", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3x4xf32>, %arg4: tensor<i64>):
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.reduce"(%arg3, %3) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %24 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%24) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xf32>) -> tensor<3x1xf32>
    %6 = "stablehlo.constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x1xf32>
    %8 = "stablehlo.divide"(%5, %7) : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<3x1xf32>) -> tensor<3x4xf32>
    %10 = "stablehlo.subtract"(%arg3, %9) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %11 = "chlo.square"(%10) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %12 = "stablehlo.convert"(%arg4) : (tensor<i64>) -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.subtract"(%13, %12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.reduce"(%11, %15) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %23 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%23) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
    %17 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %18 = "stablehlo.divide"(%16, %17) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %19 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.compare"(%14, %19) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %21 = "stablehlo.constant"() <{value = dense<0x7FF8000000000000> : tensor<f64>}> : () -> tensor<f64>
    %22 = "func.call"(%20, %18, %21) <{callee = @_where_1}> : (tensor<i1>, tensor<3xf32>, tensor<f64>) -> tensor<3xf32>
    "func.return"(%22) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i1>, tensor<3xf32>, tensor<f64>) -> tensor<3xf32>, sym_name = "_where_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i1>, %arg1: tensor<3xf32>, %arg2: tensor<f64>):
    %0 = "stablehlo.convert"(%arg2) : (tensor<f64>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %2 = "stablehlo.select"(%arg0, %arg1, %1) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%2) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
