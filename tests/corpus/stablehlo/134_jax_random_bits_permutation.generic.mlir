"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<5xi64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg67: tensor<2xui32>):
    %181 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xi64>
    %182 = "func.call"(%arg67, %181) <{callee = @_shuffle}> : (tensor<2xui32>, tensor<5xi64>) -> tensor<5xi64>
    "func.return"(%182) : (tensor<5xi64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>, tensor<5xi64>) -> tensor<5xi64>, sym_name = "_shuffle", sym_visibility = "private"}> ({
  ^bb0(%arg61: tensor<2xui32>, %arg62: tensor<5xi64>):
    %161 = "func.call"(%arg61) <{callee = @_threefry_split}> : (tensor<2xui32>) -> tensor<2x2xui32>
    %162 = "stablehlo.slice"(%161) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xui32>) -> tensor<1x2xui32>
    %163 = "stablehlo.reshape"(%162) : (tensor<1x2xui32>) -> tensor<2xui32>
    %164 = "stablehlo.slice"(%163) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %165 = "stablehlo.reshape"(%164) : (tensor<1xui32>) -> tensor<ui32>
    %166 = "stablehlo.slice"(%163) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %167 = "stablehlo.reshape"(%166) : (tensor<1xui32>) -> tensor<ui32>
    %168 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xui64>
    %169 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
    %170 = "stablehlo.broadcast_in_dim"(%169) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<5xui64>
    %171 = "stablehlo.multiply"(%170, %168) : (tensor<5xui64>, tensor<5xui64>) -> tensor<5xui64>
    %172 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %173 = "stablehlo.broadcast_in_dim"(%172) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<5xui64>
    %174 = "stablehlo.shift_right_logical"(%171, %173) : (tensor<5xui64>, tensor<5xui64>) -> tensor<5xui64>
    %175 = "stablehlo.convert"(%171) : (tensor<5xui64>) -> tensor<5xui32>
    %176 = "stablehlo.convert"(%174) : (tensor<5xui64>) -> tensor<5xui32>
    %177:2 = "func.call"(%165, %167, %176, %175) <{callee = @threefry2x32_0}> : (tensor<ui32>, tensor<ui32>, tensor<5xui32>, tensor<5xui32>) -> (tensor<5xui32>, tensor<5xui32>)
    %178 = "stablehlo.xor"(%177#0, %177#1) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %179:2 = "stablehlo.sort"(%178, %arg62) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg63: tensor<ui32>, %arg64: tensor<ui32>, %arg65: tensor<i64>, %arg66: tensor<i64>):
      %180 = "stablehlo.compare"(%arg63, %arg64) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
      "stablehlo.return"(%180) : (tensor<i1>) -> ()
    }) : (tensor<5xui32>, tensor<5xi64>) -> (tensor<5xui32>, tensor<5xi64>)
    "func.return"(%179#1) : (tensor<5xi64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<2x2xui32>, sym_name = "_threefry_split", sym_visibility = "private"}> ({
  ^bb0(%arg60: tensor<2xui32>):
    %144 = "stablehlo.slice"(%arg60) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %145 = "stablehlo.reshape"(%144) : (tensor<1xui32>) -> tensor<ui32>
    %146 = "stablehlo.slice"(%arg60) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %147 = "stablehlo.reshape"(%146) : (tensor<1xui32>) -> tensor<ui32>
    %148 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<2xui64>
    %149 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
    %150 = "stablehlo.broadcast_in_dim"(%149) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
    %151 = "stablehlo.multiply"(%150, %148) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
    %152 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %153 = "stablehlo.broadcast_in_dim"(%152) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
    %154 = "stablehlo.shift_right_logical"(%151, %153) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
    %155 = "stablehlo.convert"(%151) : (tensor<2xui64>) -> tensor<2xui32>
    %156 = "stablehlo.convert"(%154) : (tensor<2xui64>) -> tensor<2xui32>
    %157:2 = "func.call"(%145, %147, %156, %155) <{callee = @threefry2x32}> : (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>)
    %158 = "stablehlo.broadcast_in_dim"(%157#0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x1xui32>
    %159 = "stablehlo.broadcast_in_dim"(%157#1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x1xui32>
    %160 = "stablehlo.concatenate"(%158, %159) <{dimension = 1 : i64}> : (tensor<2x1xui32>, tensor<2x1xui32>) -> tensor<2x2xui32>
    "func.return"(%160) : (tensor<2x2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>), sym_name = "threefry2x32", sym_visibility = "private"}> ({
  ^bb0(%arg38: tensor<ui32>, %arg39: tensor<ui32>, %arg40: tensor<2xui32>, %arg41: tensor<2xui32>):
    %127 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %128 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %129 = "stablehlo.xor"(%arg38, %arg39) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %130 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %131 = "stablehlo.xor"(%129, %130) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %132 = "stablehlo.broadcast_in_dim"(%arg38) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %133 = "stablehlo.add"(%arg40, %132) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %134 = "stablehlo.broadcast_in_dim"(%arg39) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %135 = "stablehlo.add"(%arg41, %134) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %136 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %137 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %138:9 = "stablehlo.while"(%137, %136, %133, %135, %arg39, %131, %arg38, %127, %128) ({
    ^bb0(%arg51: tensor<i64>, %arg52: tensor<i64>, %arg53: tensor<2xui32>, %arg54: tensor<2xui32>, %arg55: tensor<ui32>, %arg56: tensor<ui32>, %arg57: tensor<ui32>, %arg58: tensor<4xui32>, %arg59: tensor<4xui32>):
      %142 = "stablehlo.constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
      %143 = "stablehlo.compare"(%arg51, %142) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%143) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg42: tensor<i64>, %arg43: tensor<i64>, %arg44: tensor<2xui32>, %arg45: tensor<2xui32>, %arg46: tensor<ui32>, %arg47: tensor<ui32>, %arg48: tensor<ui32>, %arg49: tensor<4xui32>, %arg50: tensor<4xui32>):
      %139:8 = "func.call"(%arg43, %arg44, %arg45, %arg46, %arg47, %arg48, %arg49, %arg50) <{callee = @closed_call}> : (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %140 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %141 = "stablehlo.add"(%arg42, %140) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%141, %139#0, %139#1, %139#2, %139#3, %139#4, %139#5, %139#6, %139#7) : (tensor<i64>, tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i64>, tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%138#2, %138#3) : (tensor<2xui32>, tensor<2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg30: tensor<i64>, %arg31: tensor<2xui32>, %arg32: tensor<2xui32>, %arg33: tensor<ui32>, %arg34: tensor<ui32>, %arg35: tensor<ui32>, %arg36: tensor<4xui32>, %arg37: tensor<4xui32>):
    %72 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %73 = "stablehlo.add"(%arg30, %72) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %74 = "stablehlo.slice"(%arg36) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %75 = "stablehlo.reshape"(%74) : (tensor<1xui32>) -> tensor<ui32>
    %76 = "stablehlo.add"(%arg31, %arg32) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %77 = "stablehlo.broadcast_in_dim"(%75) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %78 = "stablehlo.shift_left"(%arg32, %77) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %79 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %80 = "stablehlo.subtract"(%79, %75) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %81 = "stablehlo.broadcast_in_dim"(%80) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %82 = "stablehlo.shift_right_logical"(%arg32, %81) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %83 = "stablehlo.or"(%78, %82) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %84 = "stablehlo.xor"(%76, %83) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %85 = "stablehlo.slice"(%arg36) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %86 = "stablehlo.reshape"(%85) : (tensor<1xui32>) -> tensor<ui32>
    %87 = "stablehlo.add"(%76, %84) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %88 = "stablehlo.broadcast_in_dim"(%86) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %89 = "stablehlo.shift_left"(%84, %88) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %90 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %91 = "stablehlo.subtract"(%90, %86) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %92 = "stablehlo.broadcast_in_dim"(%91) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %93 = "stablehlo.shift_right_logical"(%84, %92) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %94 = "stablehlo.or"(%89, %93) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %95 = "stablehlo.xor"(%87, %94) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %96 = "stablehlo.slice"(%arg36) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %97 = "stablehlo.reshape"(%96) : (tensor<1xui32>) -> tensor<ui32>
    %98 = "stablehlo.add"(%87, %95) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %99 = "stablehlo.broadcast_in_dim"(%97) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %100 = "stablehlo.shift_left"(%95, %99) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %101 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %102 = "stablehlo.subtract"(%101, %97) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %103 = "stablehlo.broadcast_in_dim"(%102) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %104 = "stablehlo.shift_right_logical"(%95, %103) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %105 = "stablehlo.or"(%100, %104) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %106 = "stablehlo.xor"(%98, %105) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %107 = "stablehlo.slice"(%arg36) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %108 = "stablehlo.reshape"(%107) : (tensor<1xui32>) -> tensor<ui32>
    %109 = "stablehlo.add"(%98, %106) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %110 = "stablehlo.broadcast_in_dim"(%108) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %111 = "stablehlo.shift_left"(%106, %110) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %112 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %113 = "stablehlo.subtract"(%112, %108) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %114 = "stablehlo.broadcast_in_dim"(%113) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %115 = "stablehlo.shift_right_logical"(%106, %114) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %116 = "stablehlo.or"(%111, %115) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %117 = "stablehlo.xor"(%109, %116) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %118 = "stablehlo.broadcast_in_dim"(%arg33) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %119 = "stablehlo.add"(%109, %118) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %120 = "stablehlo.broadcast_in_dim"(%arg34) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %121 = "stablehlo.add"(%117, %120) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %122 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %123 = "stablehlo.add"(%arg30, %122) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %124 = "stablehlo.convert"(%123) : (tensor<i64>) -> tensor<ui32>
    %125 = "stablehlo.broadcast_in_dim"(%124) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %126 = "stablehlo.add"(%121, %125) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    "func.return"(%73, %119, %126, %arg34, %arg35, %arg33, %arg37, %arg36) : (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<5xui32>, tensor<5xui32>) -> (tensor<5xui32>, tensor<5xui32>), sym_name = "threefry2x32_0", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<ui32>, %arg9: tensor<ui32>, %arg10: tensor<5xui32>, %arg11: tensor<5xui32>):
    %55 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %56 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %57 = "stablehlo.xor"(%arg8, %arg9) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %58 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %59 = "stablehlo.xor"(%57, %58) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %60 = "stablehlo.broadcast_in_dim"(%arg8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %61 = "stablehlo.add"(%arg10, %60) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %62 = "stablehlo.broadcast_in_dim"(%arg9) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %63 = "stablehlo.add"(%arg11, %62) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %64 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %65 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %66:9 = "stablehlo.while"(%65, %64, %61, %63, %arg9, %59, %arg8, %55, %56) ({
    ^bb0(%arg21: tensor<i64>, %arg22: tensor<i64>, %arg23: tensor<5xui32>, %arg24: tensor<5xui32>, %arg25: tensor<ui32>, %arg26: tensor<ui32>, %arg27: tensor<ui32>, %arg28: tensor<4xui32>, %arg29: tensor<4xui32>):
      %70 = "stablehlo.constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
      %71 = "stablehlo.compare"(%arg21, %70) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%71) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg12: tensor<i64>, %arg13: tensor<i64>, %arg14: tensor<5xui32>, %arg15: tensor<5xui32>, %arg16: tensor<ui32>, %arg17: tensor<ui32>, %arg18: tensor<ui32>, %arg19: tensor<4xui32>, %arg20: tensor<4xui32>):
      %67:8 = "func.call"(%arg13, %arg14, %arg15, %arg16, %arg17, %arg18, %arg19, %arg20) <{callee = @closed_call_1}> : (tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %68 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %69 = "stablehlo.add"(%arg12, %68) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%69, %67#0, %67#1, %67#2, %67#3, %67#4, %67#5, %67#6, %67#7) : (tensor<i64>, tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i64>, tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%66#2, %66#3) : (tensor<5xui32>, tensor<5xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<5xui32>, %arg2: tensor<5xui32>, %arg3: tensor<ui32>, %arg4: tensor<ui32>, %arg5: tensor<ui32>, %arg6: tensor<4xui32>, %arg7: tensor<4xui32>):
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %2 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1xui32>) -> tensor<ui32>
    %4 = "stablehlo.add"(%arg1, %arg2) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %6 = "stablehlo.shift_left"(%arg2, %5) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %7 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %8 = "stablehlo.subtract"(%7, %3) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %10 = "stablehlo.shift_right_logical"(%arg2, %9) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %11 = "stablehlo.or"(%6, %10) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %12 = "stablehlo.xor"(%4, %11) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %13 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %14 = "stablehlo.reshape"(%13) : (tensor<1xui32>) -> tensor<ui32>
    %15 = "stablehlo.add"(%4, %12) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %16 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %17 = "stablehlo.shift_left"(%12, %16) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %18 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %19 = "stablehlo.subtract"(%18, %14) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %21 = "stablehlo.shift_right_logical"(%12, %20) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %22 = "stablehlo.or"(%17, %21) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %23 = "stablehlo.xor"(%15, %22) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %24 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %25 = "stablehlo.reshape"(%24) : (tensor<1xui32>) -> tensor<ui32>
    %26 = "stablehlo.add"(%15, %23) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %27 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %28 = "stablehlo.shift_left"(%23, %27) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %29 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %30 = "stablehlo.subtract"(%29, %25) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %32 = "stablehlo.shift_right_logical"(%23, %31) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %33 = "stablehlo.or"(%28, %32) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %34 = "stablehlo.xor"(%26, %33) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %35 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %36 = "stablehlo.reshape"(%35) : (tensor<1xui32>) -> tensor<ui32>
    %37 = "stablehlo.add"(%26, %34) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %38 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %39 = "stablehlo.shift_left"(%34, %38) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %40 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %41 = "stablehlo.subtract"(%40, %36) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %43 = "stablehlo.shift_right_logical"(%34, %42) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %44 = "stablehlo.or"(%39, %43) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %45 = "stablehlo.xor"(%37, %44) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %46 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %47 = "stablehlo.add"(%37, %46) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %48 = "stablehlo.broadcast_in_dim"(%arg4) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %49 = "stablehlo.add"(%45, %48) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    %50 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %51 = "stablehlo.add"(%arg0, %50) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %52 = "stablehlo.convert"(%51) : (tensor<i64>) -> tensor<ui32>
    %53 = "stablehlo.broadcast_in_dim"(%52) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<5xui32>
    %54 = "stablehlo.add"(%49, %53) : (tensor<5xui32>, tensor<5xui32>) -> tensor<5xui32>
    "func.return"(%1, %47, %54, %arg4, %arg5, %arg3, %arg7, %arg6) : (tensor<i64>, tensor<5xui32>, tensor<5xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
