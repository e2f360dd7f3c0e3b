"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<4xi32>) -> tensor<4x5xf64>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4xi32>):
    %6 = "func.call"(%arg1) <{callee = @_one_hot}> : (tensor<4xi32>) -> tensor<4x5xf64>
    "func.return"(%6) : (tensor<4x5xf64>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xi32>) -> tensor<4x5xf64>, sym_name = "_one_hot", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xi32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4x1xi32>
    %1 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<1x5xi32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xi32>) -> tensor<4x5xi32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x5xi32>) -> tensor<4x5xi32>
    %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x5xi32>, tensor<4x5xi32>) -> tensor<4x5xi1>
    %5 = "stablehlo.convert"(%4) : (tensor<4x5xi1>) -> tensor<4x5xf64>
    "func.return"(%5) : (tensor<4x5xf64>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
