// RUN: loom-opt %s --split-input-file --verify-diagnostics

// The verifiers of the comm ops, each error at the op that breaks a rule.

func.func @duplicate_source(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{duplicate sources not allowed: 0}}
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>} : tensor<4xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
  return %y : tensor<4xf32>
}

// -----

func.func @not_pairs(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expect source_target_pairs attribute of shape (N, 2), but got [1, 3]}}
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : tensor<4xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
  return %y : tensor<4xf32>
}

// -----

func.func @wrong_future(%x: tensor<4xf32>) -> !comm.future<tensor<2xf32>> {
  // expected-error @+1 {{result type '!comm.future<tensor<2xf32>>' should be '!comm.future<tensor<4xf32>>'}}
  %f = "comm.collective_permute_start"(%x) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> !comm.future<tensor<2xf32>>
  return %f : !comm.future<tensor<2xf32>>
}

// -----

func.func @wrong_result(%x: tensor<4xf32>) -> tensor<3xf32> {
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : tensor<4xf32>
  // expected-error @+1 {{result type 'tensor<3xf32>' should be 'tensor<4xf32>', the type the future carries}}
  %y = "comm.collective_permute_done"(%f) : (!comm.future<tensor<4xf32>>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @waited_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : tensor<4xf32>
  // expected-error @+1 {{a future must be waited for by exactly one comm.collective_permute_done}}
  %y = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
  %z = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
  %s = stablehlo.add %y, %z : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @other_block(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : tensor<4xf32>
  %r = "stablehlo.if"(%c) ({
    // expected-error @+1 {{waits for a future started in another block}}
    %y = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
    stablehlo.return %y : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @not_a_future(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'comm.collective_permute_done' op operand #0 must be !comm.future}}
  %y = "comm.collective_permute_done"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
