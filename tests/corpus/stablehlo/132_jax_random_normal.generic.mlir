"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<3xf64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg35: tensor<2xui32>):
    %119 = "func.call"(%arg35) <{callee = @_normal}> : (tensor<2xui32>) -> tensor<3xf64>
    "func.return"(%119) : (tensor<3xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<3xf64>, sym_name = "_normal", sym_visibility = "private"}> ({
  ^bb0(%arg34: tensor<2xui32>):
    %118 = "func.call"(%arg34) <{callee = @_normal_real}> : (tensor<2xui32>) -> tensor<3xf64>
    "func.return"(%118) : (tensor<3xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<3xf64>, sym_name = "_normal_real", sym_visibility = "private"}> ({
  ^bb0(%arg33: tensor<2xui32>):
    %111 = "stablehlo.constant"() <{value = dense<-0.99999999999999988> : tensor<f64>}> : () -> tensor<f64>
    %112 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %113 = "func.call"(%arg33, %111, %112) <{callee = @_uniform}> : (tensor<2xui32>, tensor<f64>, tensor<f64>) -> tensor<3xf64>
    %114 = "chlo.erf_inv"(%113) : (tensor<3xf64>) -> tensor<3xf64>
    %115 = "stablehlo.constant"() <{value = dense<1.4142135623730951> : tensor<f64>}> : () -> tensor<f64>
    %116 = "stablehlo.broadcast_in_dim"(%115) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<3xf64>
    %117 = "stablehlo.multiply"(%116, %114) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    "func.return"(%117) : (tensor<3xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>, tensor<f64>, tensor<f64>) -> tensor<3xf64>, sym_name = "_uniform", sym_visibility = "private"}> ({
  ^bb0(%arg30: tensor<2xui32>, %arg31: tensor<f64>, %arg32: tensor<f64>):
    %72 = "stablehlo.broadcast_in_dim"(%arg31) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<1xf64>
    %73 = "stablehlo.broadcast_in_dim"(%arg32) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<1xf64>
    %74 = "stablehlo.slice"(%arg30) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %75 = "stablehlo.reshape"(%74) : (tensor<1xui32>) -> tensor<ui32>
    %76 = "stablehlo.slice"(%arg30) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %77 = "stablehlo.reshape"(%76) : (tensor<1xui32>) -> tensor<ui32>
    %78 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3xui64>
    %79 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
    %80 = "stablehlo.broadcast_in_dim"(%79) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<3xui64>
    %81 = "stablehlo.multiply"(%80, %78) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
    %82 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %83 = "stablehlo.broadcast_in_dim"(%82) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<3xui64>
    %84 = "stablehlo.shift_right_logical"(%81, %83) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
    %85 = "stablehlo.convert"(%81) : (tensor<3xui64>) -> tensor<3xui32>
    %86 = "stablehlo.convert"(%84) : (tensor<3xui64>) -> tensor<3xui32>
    %87:2 = "func.call"(%75, %77, %86, %85) <{callee = @threefry2x32}> : (tensor<ui32>, tensor<ui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>)
    %88 = "stablehlo.convert"(%87#0) : (tensor<3xui32>) -> tensor<3xui64>
    %89 = "stablehlo.convert"(%87#1) : (tensor<3xui32>) -> tensor<3xui64>
    %90 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %91 = "stablehlo.broadcast_in_dim"(%90) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<3xui64>
    %92 = "stablehlo.shift_left"(%88, %91) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
    %93 = "stablehlo.or"(%92, %89) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
    %94 = "stablehlo.constant"() <{value = dense<12> : tensor<ui64>}> : () -> tensor<ui64>
    %95 = "stablehlo.broadcast_in_dim"(%94) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<3xui64>
    %96 = "stablehlo.shift_right_logical"(%93, %95) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
    %97 = "stablehlo.constant"() <{value = dense<4607182418800017408> : tensor<ui64>}> : () -> tensor<ui64>
    %98 = "stablehlo.broadcast_in_dim"(%97) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<3xui64>
    %99 = "stablehlo.or"(%96, %98) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
    %100 = "stablehlo.bitcast_convert"(%99) : (tensor<3xui64>) -> tensor<3xf64>
    %101 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %102 = "stablehlo.broadcast_in_dim"(%101) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<3xf64>
    %103 = "stablehlo.subtract"(%100, %102) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %104 = "stablehlo.subtract"(%73, %72) : (tensor<1xf64>, tensor<1xf64>) -> tensor<1xf64>
    %105 = "stablehlo.broadcast_in_dim"(%104) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf64>) -> tensor<3xf64>
    %106 = "stablehlo.multiply"(%103, %105) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %107 = "stablehlo.broadcast_in_dim"(%72) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf64>) -> tensor<3xf64>
    %108 = "stablehlo.add"(%106, %107) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %109 = "stablehlo.broadcast_in_dim"(%72) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf64>) -> tensor<3xf64>
    %110 = "stablehlo.maximum"(%109, %108) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    "func.return"(%110) : (tensor<3xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>), sym_name = "threefry2x32", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<ui32>, %arg9: tensor<ui32>, %arg10: tensor<3xui32>, %arg11: tensor<3xui32>):
    %55 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %56 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %57 = "stablehlo.xor"(%arg8, %arg9) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %58 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %59 = "stablehlo.xor"(%57, %58) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %60 = "stablehlo.broadcast_in_dim"(%arg8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %61 = "stablehlo.add"(%arg10, %60) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %62 = "stablehlo.broadcast_in_dim"(%arg9) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %63 = "stablehlo.add"(%arg11, %62) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %64 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %65 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %66:9 = "stablehlo.while"(%65, %64, %61, %63, %arg9, %59, %arg8, %55, %56) ({
    ^bb0(%arg21: tensor<i64>, %arg22: tensor<i64>, %arg23: tensor<3xui32>, %arg24: tensor<3xui32>, %arg25: tensor<ui32>, %arg26: tensor<ui32>, %arg27: tensor<ui32>, %arg28: tensor<4xui32>, %arg29: tensor<4xui32>):
      %70 = "stablehlo.constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
      %71 = "stablehlo.compare"(%arg21, %70) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%71) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg12: tensor<i64>, %arg13: tensor<i64>, %arg14: tensor<3xui32>, %arg15: tensor<3xui32>, %arg16: tensor<ui32>, %arg17: tensor<ui32>, %arg18: tensor<ui32>, %arg19: tensor<4xui32>, %arg20: tensor<4xui32>):
      %67:8 = "func.call"(%arg13, %arg14, %arg15, %arg16, %arg17, %arg18, %arg19, %arg20) <{callee = @closed_call}> : (tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %68 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %69 = "stablehlo.add"(%arg12, %68) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%69, %67#0, %67#1, %67#2, %67#3, %67#4, %67#5, %67#6, %67#7) : (tensor<i64>, tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i64>, tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%66#2, %66#3) : (tensor<3xui32>, tensor<3xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<3xui32>, %arg2: tensor<3xui32>, %arg3: tensor<ui32>, %arg4: tensor<ui32>, %arg5: tensor<ui32>, %arg6: tensor<4xui32>, %arg7: tensor<4xui32>):
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %2 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1xui32>) -> tensor<ui32>
    %4 = "stablehlo.add"(%arg1, %arg2) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %6 = "stablehlo.shift_left"(%arg2, %5) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %7 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %8 = "stablehlo.subtract"(%7, %3) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %10 = "stablehlo.shift_right_logical"(%arg2, %9) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %11 = "stablehlo.or"(%6, %10) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %12 = "stablehlo.xor"(%4, %11) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %13 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %14 = "stablehlo.reshape"(%13) : (tensor<1xui32>) -> tensor<ui32>
    %15 = "stablehlo.add"(%4, %12) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %16 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %17 = "stablehlo.shift_left"(%12, %16) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %18 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %19 = "stablehlo.subtract"(%18, %14) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %21 = "stablehlo.shift_right_logical"(%12, %20) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %22 = "stablehlo.or"(%17, %21) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %23 = "stablehlo.xor"(%15, %22) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %24 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %25 = "stablehlo.reshape"(%24) : (tensor<1xui32>) -> tensor<ui32>
    %26 = "stablehlo.add"(%15, %23) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %27 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %28 = "stablehlo.shift_left"(%23, %27) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %29 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %30 = "stablehlo.subtract"(%29, %25) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %32 = "stablehlo.shift_right_logical"(%23, %31) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %33 = "stablehlo.or"(%28, %32) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %34 = "stablehlo.xor"(%26, %33) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %35 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %36 = "stablehlo.reshape"(%35) : (tensor<1xui32>) -> tensor<ui32>
    %37 = "stablehlo.add"(%26, %34) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %38 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %39 = "stablehlo.shift_left"(%34, %38) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %40 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %41 = "stablehlo.subtract"(%40, %36) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %43 = "stablehlo.shift_right_logical"(%34, %42) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %44 = "stablehlo.or"(%39, %43) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %45 = "stablehlo.xor"(%37, %44) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %46 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %47 = "stablehlo.add"(%37, %46) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %48 = "stablehlo.broadcast_in_dim"(%arg4) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %49 = "stablehlo.add"(%45, %48) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    %50 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %51 = "stablehlo.add"(%arg0, %50) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %52 = "stablehlo.convert"(%51) : (tensor<i64>) -> tensor<ui32>
    %53 = "stablehlo.broadcast_in_dim"(%52) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<3xui32>
    %54 = "stablehlo.add"(%49, %53) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
    "func.return"(%1, %47, %54, %arg4, %arg5, %arg3, %arg7, %arg6) : (tensor<i64>, tensor<3xui32>, tensor<3xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
