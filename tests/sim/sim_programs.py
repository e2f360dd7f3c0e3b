"""Programs the simulator tests share."""


def permute_beside_dot(devices: int) -> str:
    """A permute around a ring of `devices` started before a dot and done after it: the transfer
    overlaps the dot."""
    pairs = ", ".join(f"[{d}, {(d + 1) % devices}]" for d in range(devices))
    return f"""func.func @main(%x: tensor<1024xf32>, %a: tensor<128x128xf32>) -> tensor<128x128xf32> {{
  %f = comm.collective_permute_start %x {{source_target_pairs = dense<[{pairs}]> :
      tensor<{devices}x2xi64>}} : tensor<1024xf32>
  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] :
      (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<1024xf32>>
  %e = stablehlo.exponential %d : tensor<128x128xf32>
  return %e : tensor<128x128xf32>
}}"""


ASYNC = permute_beside_dot(4)
