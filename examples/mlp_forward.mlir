// A two-layer perceptron's forward pass in StableHLO, as `jax.jit(f).lower(...)` emits it
// (pretty form for the func, generic form for the StableHLO ops): x @ w1 -> tanh -> @ w2 -> softmax.
func.func @main(%x: tensor<4x3xf32>, %w1: tensor<3x5xf32>, %w2: tensor<5x2xf32>) -> tensor<4x2xf32> {
  %h = "stablehlo.dot_general"(%x, %w1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %a = "stablehlo.tanh"(%h) : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %z = "stablehlo.dot_general"(%a, %w2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x5xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%z, %ninf) <{dimensions = array<i64: 1>}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %r = "stablehlo.maximum"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%r) : (tensor<f32>) -> ()
  }) : (tensor<4x2xf32>, tensor<f32>) -> tensor<4xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x2xf32>
  %s = "stablehlo.subtract"(%z, %mb) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %e = "stablehlo.exponential"(%s) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %d = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 1>}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %r = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%r) : (tensor<f32>) -> ()
  }) : (tensor<4x2xf32>, tensor<f32>) -> tensor<4xf32>
  %db = "stablehlo.broadcast_in_dim"(%d) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x2xf32>
  %y = "stablehlo.divide"(%e, %db) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
