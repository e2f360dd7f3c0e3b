"""Shape ops: reshape, broadcast_in_dim, transpose, slice, pad, concatenate, reverse, iota,
constants and the dynamic-shape forms.

Their kernels are in `loom.backend.kernels_numpy` / `kernels_torch`, their derivatives (linear
maps: the JVP applies the op to the tangent, the VJP its transpose) in
`loom.transforms.autodiff` / `forward_ad`, their batching rules in `loom.transforms.batching`.
What they lack is declared here.
"""

from __future__ import annotations

from loom.ops.registry import declare, unsupported

# Constants need no torch kernel: the numpy kernel's value is a compile-time constant that the
# torch executor places on the device as it is.
declare(["stablehlo.constant", "stablehlo.iota"],
        unsupported("a compile-time constant: the numpy kernel's value is placed on the device"), tables=("torch",))
declare(["stablehlo.constant", "stablehlo.iota"],
        unsupported("an unbatched constant: vmap leaves it unbatched without a rule"), tables=("batching",))

DYNAMIC = unsupported("dynamic shapes: run for static programs exported by JAX, not traced by loom")
declare(["stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_iota", "stablehlo.dynamic_reshape",
         "stablehlo.get_dimension_size"], DYNAMIC, tables=("torch", "jvp", "vjp", "batching"))
declare(["stablehlo.dynamic_pad", "stablehlo.real_dynamic_slice", "stablehlo.set_dimension_size",
         "stablehlo.broadcast"], unsupported("parsed and printed only: JAX emits broadcast_in_dim and static "
                                             "shapes"))
declare(["chlo.constant", "chlo.constant_like"],
        unsupported("parsed and printed only: loom's front end emits stablehlo.constant"))
