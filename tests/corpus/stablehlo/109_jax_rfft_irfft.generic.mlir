"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<8xf32>):
    %2 = "func.call"(%arg2) <{callee = @fft}> : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
    %3 = "func.call"(%2) <{callee = @fft_0}> : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
    "func.return"(%3) : (tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<5xcomplex<f32>>, sym_name = "fft", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<8xf32>):
    %1 = "stablehlo.fft"(%arg1) <{fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
    "func.return"(%1) : (tensor<5xcomplex<f32>>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5xcomplex<f32>>) -> tensor<8xf32>, sym_name = "fft_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<5xcomplex<f32>>):
    %0 = "stablehlo.fft"(%arg0) <{fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type IRFFT>}> : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
