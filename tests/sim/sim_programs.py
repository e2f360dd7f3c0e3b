"""Programs the simulator tests share."""

# A permute around a ring of 4 devices started before a dot and done after it: the transfer
# overlaps the dot.
ASYNC = """func.func @main(%x: tensor<1024xf32>, %a: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> :
      tensor<4x2xi64>} : tensor<1024xf32>
  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] :
      (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<1024xf32>>
  %e = stablehlo.exponential %d : tensor<128x128xf32>
  return %e : tensor<128x128xf32>
}"""
