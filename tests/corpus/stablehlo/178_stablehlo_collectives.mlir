module {
  func.func @main(%arg0: tensor<4x4xf32>, %arg1: !stablehlo.token) {
    %0 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x8xf32>
    %1 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %13 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %13 : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = "stablehlo.all_to_all"(%arg0) <{concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}> : (tensor<4x4xf32>) -> tensor<8x2xf32>
    %3 = "stablehlo.collective_broadcast"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %4 = "stablehlo.collective_permute"(%arg0) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %5 = "stablehlo.reduce_scatter"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %13 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %13 : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<2x4xf32>
    %6 = stablehlo.replica_id : tensor<ui32>
    %7 = stablehlo.partition_id : tensor<ui32>
    %8:2 = "stablehlo.infeed"(%arg1) <{infeed_config = "", layout = [[1, 0]]}> : (!stablehlo.token) -> (tensor<3x3xi32>, !stablehlo.token)
    %9 = "stablehlo.outfeed"(%arg0, %arg1) <{outfeed_config = ""}> : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token
    %10 = "stablehlo.send"(%arg0, %arg1) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>, is_host_transfer = true}> : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token
    %11:2 = "stablehlo.recv"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>, is_host_transfer = true}> : (!stablehlo.token) -> (tensor<4x4xf32>, !stablehlo.token)
    %12 = "stablehlo.cross-replica-sum"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return
  }
}
