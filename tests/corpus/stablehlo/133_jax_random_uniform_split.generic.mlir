"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<2x2xf64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg64: tensor<2xui32>):
    %207 = "func.call"(%arg64) <{callee = @_threefry_split}> : (tensor<2xui32>) -> tensor<2x2xui32>
    %208 = "stablehlo.slice"(%207) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xui32>) -> tensor<1x2xui32>
    %209 = "stablehlo.reshape"(%208) : (tensor<1x2xui32>) -> tensor<2xui32>
    %210 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %211 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %212 = "func.call"(%209, %210, %211) <{callee = @_uniform}> : (tensor<2xui32>, tensor<f64>, tensor<f64>) -> tensor<2x2xf64>
    "func.return"(%212) : (tensor<2x2xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>) -> tensor<2x2xui32>, sym_name = "_threefry_split", sym_visibility = "private"}> ({
  ^bb0(%arg63: tensor<2xui32>):
    %190 = "stablehlo.slice"(%arg63) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %191 = "stablehlo.reshape"(%190) : (tensor<1xui32>) -> tensor<ui32>
    %192 = "stablehlo.slice"(%arg63) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %193 = "stablehlo.reshape"(%192) : (tensor<1xui32>) -> tensor<ui32>
    %194 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<2xui64>
    %195 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
    %196 = "stablehlo.broadcast_in_dim"(%195) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
    %197 = "stablehlo.multiply"(%196, %194) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
    %198 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %199 = "stablehlo.broadcast_in_dim"(%198) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
    %200 = "stablehlo.shift_right_logical"(%197, %199) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
    %201 = "stablehlo.convert"(%197) : (tensor<2xui64>) -> tensor<2xui32>
    %202 = "stablehlo.convert"(%200) : (tensor<2xui64>) -> tensor<2xui32>
    %203:2 = "func.call"(%191, %193, %202, %201) <{callee = @threefry2x32}> : (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>)
    %204 = "stablehlo.broadcast_in_dim"(%203#0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x1xui32>
    %205 = "stablehlo.broadcast_in_dim"(%203#1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x1xui32>
    %206 = "stablehlo.concatenate"(%204, %205) <{dimension = 1 : i64}> : (tensor<2x1xui32>, tensor<2x1xui32>) -> tensor<2x2xui32>
    "func.return"(%206) : (tensor<2x2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>), sym_name = "threefry2x32", sym_visibility = "private"}> ({
  ^bb0(%arg41: tensor<ui32>, %arg42: tensor<ui32>, %arg43: tensor<2xui32>, %arg44: tensor<2xui32>):
    %173 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %174 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %175 = "stablehlo.xor"(%arg41, %arg42) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %176 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %177 = "stablehlo.xor"(%175, %176) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %178 = "stablehlo.broadcast_in_dim"(%arg41) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %179 = "stablehlo.add"(%arg43, %178) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %180 = "stablehlo.broadcast_in_dim"(%arg42) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %181 = "stablehlo.add"(%arg44, %180) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %182 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %183 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %184:9 = "stablehlo.while"(%183, %182, %179, %181, %arg42, %177, %arg41, %173, %174) ({
    ^bb0(%arg54: tensor<i64>, %arg55: tensor<i64>, %arg56: tensor<2xui32>, %arg57: tensor<2xui32>, %arg58: tensor<ui32>, %arg59: tensor<ui32>, %arg60: tensor<ui32>, %arg61: tensor<4xui32>, %arg62: tensor<4xui32>):
      %188 = "stablehlo.constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
      %189 = "stablehlo.compare"(%arg54, %188) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%189) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg45: tensor<i64>, %arg46: tensor<i64>, %arg47: tensor<2xui32>, %arg48: tensor<2xui32>, %arg49: tensor<ui32>, %arg50: tensor<ui32>, %arg51: tensor<ui32>, %arg52: tensor<4xui32>, %arg53: tensor<4xui32>):
      %185:8 = "func.call"(%arg46, %arg47, %arg48, %arg49, %arg50, %arg51, %arg52, %arg53) <{callee = @closed_call}> : (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %186 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %187 = "stablehlo.add"(%arg45, %186) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%187, %185#0, %185#1, %185#2, %185#3, %185#4, %185#5, %185#6, %185#7) : (tensor<i64>, tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i64>, tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%184#2, %184#3) : (tensor<2xui32>, tensor<2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg33: tensor<i64>, %arg34: tensor<2xui32>, %arg35: tensor<2xui32>, %arg36: tensor<ui32>, %arg37: tensor<ui32>, %arg38: tensor<ui32>, %arg39: tensor<4xui32>, %arg40: tensor<4xui32>):
    %118 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %119 = "stablehlo.add"(%arg33, %118) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %120 = "stablehlo.slice"(%arg39) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %121 = "stablehlo.reshape"(%120) : (tensor<1xui32>) -> tensor<ui32>
    %122 = "stablehlo.add"(%arg34, %arg35) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %123 = "stablehlo.broadcast_in_dim"(%121) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %124 = "stablehlo.shift_left"(%arg35, %123) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %125 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %126 = "stablehlo.subtract"(%125, %121) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %127 = "stablehlo.broadcast_in_dim"(%126) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %128 = "stablehlo.shift_right_logical"(%arg35, %127) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %129 = "stablehlo.or"(%124, %128) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %130 = "stablehlo.xor"(%122, %129) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %131 = "stablehlo.slice"(%arg39) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %132 = "stablehlo.reshape"(%131) : (tensor<1xui32>) -> tensor<ui32>
    %133 = "stablehlo.add"(%122, %130) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %134 = "stablehlo.broadcast_in_dim"(%132) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %135 = "stablehlo.shift_left"(%130, %134) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %136 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %137 = "stablehlo.subtract"(%136, %132) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %138 = "stablehlo.broadcast_in_dim"(%137) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %139 = "stablehlo.shift_right_logical"(%130, %138) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %140 = "stablehlo.or"(%135, %139) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %141 = "stablehlo.xor"(%133, %140) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %142 = "stablehlo.slice"(%arg39) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %143 = "stablehlo.reshape"(%142) : (tensor<1xui32>) -> tensor<ui32>
    %144 = "stablehlo.add"(%133, %141) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %145 = "stablehlo.broadcast_in_dim"(%143) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %146 = "stablehlo.shift_left"(%141, %145) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %147 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %148 = "stablehlo.subtract"(%147, %143) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %149 = "stablehlo.broadcast_in_dim"(%148) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %150 = "stablehlo.shift_right_logical"(%141, %149) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %151 = "stablehlo.or"(%146, %150) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %152 = "stablehlo.xor"(%144, %151) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %153 = "stablehlo.slice"(%arg39) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %154 = "stablehlo.reshape"(%153) : (tensor<1xui32>) -> tensor<ui32>
    %155 = "stablehlo.add"(%144, %152) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %156 = "stablehlo.broadcast_in_dim"(%154) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %157 = "stablehlo.shift_left"(%152, %156) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %158 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %159 = "stablehlo.subtract"(%158, %154) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %160 = "stablehlo.broadcast_in_dim"(%159) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %161 = "stablehlo.shift_right_logical"(%152, %160) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %162 = "stablehlo.or"(%157, %161) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %163 = "stablehlo.xor"(%155, %162) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %164 = "stablehlo.broadcast_in_dim"(%arg36) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %165 = "stablehlo.add"(%155, %164) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %166 = "stablehlo.broadcast_in_dim"(%arg37) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %167 = "stablehlo.add"(%163, %166) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    %168 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %169 = "stablehlo.add"(%arg33, %168) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %170 = "stablehlo.convert"(%169) : (tensor<i64>) -> tensor<ui32>
    %171 = "stablehlo.broadcast_in_dim"(%170) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
    %172 = "stablehlo.add"(%167, %171) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
    "func.return"(%119, %165, %172, %arg37, %arg38, %arg36, %arg40, %arg39) : (tensor<i64>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xui32>, tensor<f64>, tensor<f64>) -> tensor<2x2xf64>, sym_name = "_uniform", sym_visibility = "private"}> ({
  ^bb0(%arg30: tensor<2xui32>, %arg31: tensor<f64>, %arg32: tensor<f64>):
    %72 = "stablehlo.convert"(%arg31) : (tensor<f64>) -> tensor<f64>
    %73 = "stablehlo.convert"(%arg32) : (tensor<f64>) -> tensor<f64>
    %74 = "stablehlo.broadcast_in_dim"(%72) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<1x1xf64>
    %75 = "stablehlo.broadcast_in_dim"(%73) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<1x1xf64>
    %76 = "stablehlo.slice"(%arg30) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %77 = "stablehlo.reshape"(%76) : (tensor<1xui32>) -> tensor<ui32>
    %78 = "stablehlo.slice"(%arg30) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
    %79 = "stablehlo.reshape"(%78) : (tensor<1xui32>) -> tensor<ui32>
    %80 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<2x2xui64>
    %81 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x2xui64>
    %82 = "stablehlo.constant"() <{value = dense<2> : tensor<ui64>}> : () -> tensor<ui64>
    %83 = "stablehlo.broadcast_in_dim"(%82) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2x2xui64>
    %84 = "stablehlo.multiply"(%83, %80) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %85 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
    %86 = "stablehlo.broadcast_in_dim"(%85) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2x2xui64>
    %87 = "stablehlo.multiply"(%86, %81) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %88 = "stablehlo.add"(%84, %87) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %89 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %90 = "stablehlo.broadcast_in_dim"(%89) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2x2xui64>
    %91 = "stablehlo.shift_right_logical"(%88, %90) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %92 = "stablehlo.convert"(%88) : (tensor<2x2xui64>) -> tensor<2x2xui32>
    %93 = "stablehlo.convert"(%91) : (tensor<2x2xui64>) -> tensor<2x2xui32>
    %94:2 = "func.call"(%77, %79, %93, %92) <{callee = @threefry2x32_0}> : (tensor<ui32>, tensor<ui32>, tensor<2x2xui32>, tensor<2x2xui32>) -> (tensor<2x2xui32>, tensor<2x2xui32>)
    %95 = "stablehlo.convert"(%94#0) : (tensor<2x2xui32>) -> tensor<2x2xui64>
    %96 = "stablehlo.convert"(%94#1) : (tensor<2x2xui32>) -> tensor<2x2xui64>
    %97 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
    %98 = "stablehlo.broadcast_in_dim"(%97) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2x2xui64>
    %99 = "stablehlo.shift_left"(%95, %98) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %100 = "stablehlo.or"(%99, %96) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %101 = "stablehlo.constant"() <{value = dense<12> : tensor<ui64>}> : () -> tensor<ui64>
    %102 = "stablehlo.broadcast_in_dim"(%101) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2x2xui64>
    %103 = "stablehlo.shift_right_logical"(%100, %102) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %104 = "stablehlo.constant"() <{value = dense<4607182418800017408> : tensor<ui64>}> : () -> tensor<ui64>
    %105 = "stablehlo.broadcast_in_dim"(%104) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2x2xui64>
    %106 = "stablehlo.or"(%103, %105) : (tensor<2x2xui64>, tensor<2x2xui64>) -> tensor<2x2xui64>
    %107 = "stablehlo.bitcast_convert"(%106) : (tensor<2x2xui64>) -> tensor<2x2xf64>
    %108 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f64>}> : () -> tensor<f64>
    %109 = "stablehlo.broadcast_in_dim"(%108) <{broadcast_dimensions = array<i64>}> : (tensor<f64>) -> tensor<2x2xf64>
    %110 = "stablehlo.subtract"(%107, %109) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
    %111 = "stablehlo.subtract"(%75, %74) : (tensor<1x1xf64>, tensor<1x1xf64>) -> tensor<1x1xf64>
    %112 = "stablehlo.broadcast_in_dim"(%111) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf64>) -> tensor<2x2xf64>
    %113 = "stablehlo.multiply"(%110, %112) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
    %114 = "stablehlo.broadcast_in_dim"(%74) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf64>) -> tensor<2x2xf64>
    %115 = "stablehlo.add"(%113, %114) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
    %116 = "stablehlo.broadcast_in_dim"(%74) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf64>) -> tensor<2x2xf64>
    %117 = "stablehlo.maximum"(%116, %115) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
    "func.return"(%117) : (tensor<2x2xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<2x2xui32>, tensor<2x2xui32>) -> (tensor<2x2xui32>, tensor<2x2xui32>), sym_name = "threefry2x32_0", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<ui32>, %arg9: tensor<ui32>, %arg10: tensor<2x2xui32>, %arg11: tensor<2x2xui32>):
    %55 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %56 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
    %57 = "stablehlo.xor"(%arg8, %arg9) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %58 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
    %59 = "stablehlo.xor"(%57, %58) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %60 = "stablehlo.broadcast_in_dim"(%arg8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %61 = "stablehlo.add"(%arg10, %60) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %62 = "stablehlo.broadcast_in_dim"(%arg9) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %63 = "stablehlo.add"(%arg11, %62) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %64 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %65 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %66:9 = "stablehlo.while"(%65, %64, %61, %63, %arg9, %59, %arg8, %55, %56) ({
    ^bb0(%arg21: tensor<i64>, %arg22: tensor<i64>, %arg23: tensor<2x2xui32>, %arg24: tensor<2x2xui32>, %arg25: tensor<ui32>, %arg26: tensor<ui32>, %arg27: tensor<ui32>, %arg28: tensor<4xui32>, %arg29: tensor<4xui32>):
      %70 = "stablehlo.constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
      %71 = "stablehlo.compare"(%arg21, %70) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%71) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg12: tensor<i64>, %arg13: tensor<i64>, %arg14: tensor<2x2xui32>, %arg15: tensor<2x2xui32>, %arg16: tensor<ui32>, %arg17: tensor<ui32>, %arg18: tensor<ui32>, %arg19: tensor<4xui32>, %arg20: tensor<4xui32>):
      %67:8 = "func.call"(%arg13, %arg14, %arg15, %arg16, %arg17, %arg18, %arg19, %arg20) <{callee = @closed_call_1}> : (tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %68 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %69 = "stablehlo.add"(%arg12, %68) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%69, %67#0, %67#1, %67#2, %67#3, %67#4, %67#5, %67#6, %67#7) : (tensor<i64>, tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : (tensor<i64>, tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
    "func.return"(%66#2, %66#3) : (tensor<2x2xui32>, tensor<2x2xui32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), sym_name = "closed_call_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<2x2xui32>, %arg2: tensor<2x2xui32>, %arg3: tensor<ui32>, %arg4: tensor<ui32>, %arg5: tensor<ui32>, %arg6: tensor<4xui32>, %arg7: tensor<4xui32>):
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %2 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %3 = "stablehlo.reshape"(%2) : (tensor<1xui32>) -> tensor<ui32>
    %4 = "stablehlo.add"(%arg1, %arg2) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %6 = "stablehlo.shift_left"(%arg2, %5) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %7 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %8 = "stablehlo.subtract"(%7, %3) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %10 = "stablehlo.shift_right_logical"(%arg2, %9) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %11 = "stablehlo.or"(%6, %10) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %12 = "stablehlo.xor"(%4, %11) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %13 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %14 = "stablehlo.reshape"(%13) : (tensor<1xui32>) -> tensor<ui32>
    %15 = "stablehlo.add"(%4, %12) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %16 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %17 = "stablehlo.shift_left"(%12, %16) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %18 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %19 = "stablehlo.subtract"(%18, %14) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %21 = "stablehlo.shift_right_logical"(%12, %20) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %22 = "stablehlo.or"(%17, %21) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %23 = "stablehlo.xor"(%15, %22) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %24 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %25 = "stablehlo.reshape"(%24) : (tensor<1xui32>) -> tensor<ui32>
    %26 = "stablehlo.add"(%15, %23) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %27 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %28 = "stablehlo.shift_left"(%23, %27) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %29 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %30 = "stablehlo.subtract"(%29, %25) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %32 = "stablehlo.shift_right_logical"(%23, %31) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %33 = "stablehlo.or"(%28, %32) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %34 = "stablehlo.xor"(%26, %33) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %35 = "stablehlo.slice"(%arg6) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
    %36 = "stablehlo.reshape"(%35) : (tensor<1xui32>) -> tensor<ui32>
    %37 = "stablehlo.add"(%26, %34) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %38 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %39 = "stablehlo.shift_left"(%34, %38) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %40 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
    %41 = "stablehlo.subtract"(%40, %36) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %43 = "stablehlo.shift_right_logical"(%34, %42) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %44 = "stablehlo.or"(%39, %43) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %45 = "stablehlo.xor"(%37, %44) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %46 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %47 = "stablehlo.add"(%37, %46) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %48 = "stablehlo.broadcast_in_dim"(%arg4) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %49 = "stablehlo.add"(%45, %48) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    %50 = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %51 = "stablehlo.add"(%arg0, %50) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %52 = "stablehlo.convert"(%51) : (tensor<i64>) -> tensor<ui32>
    %53 = "stablehlo.broadcast_in_dim"(%52) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2x2xui32>
    %54 = "stablehlo.add"(%49, %53) : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
    "func.return"(%1, %47, %54, %arg4, %arg5, %arg3, %arg7, %arg6) : (tensor<i64>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
