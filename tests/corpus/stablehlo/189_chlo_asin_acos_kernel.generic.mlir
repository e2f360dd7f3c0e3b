"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xcomplex<f32>>) -> (), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xcomplex<f32>>):
    %0 = "chlo._asin_acos_kernel"(%arg0) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
