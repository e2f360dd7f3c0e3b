"""Op rules, one module per op family: everything loom knows about an op besides its declaration
(kernels, derivative, batching, codegen), next to the op, filling the tables the backends and
transformations read (`KERNELS`, `TORCH_KERNELS`, `CODEGEN_RULES`, `INTERPRETER_RULES`,
`JVP_RULES`, `VJP_RULES`, `BATCH_RULES`).

    registry      the rule tables, `unsupported("reason")`, `declare`, the coverage walk
    elementwise   StableHLO's and CHLO's elementwise ops: one declarative row per op (kernels,
                  one derivative for both modes, lax / loom.numpy names; batching from the trait)
    indexing      gather, scatter, dynamic_slice, dynamic_update_slice: derivatives and batching
    linalg        dot_general and convolution: derivatives and batching; fft and the ops loom lacks
    reductions    reduce, reduce_window, sort: derivatives and batching
    shape         reshape, broadcast_in_dim, transpose, reverse, slice, pad, concatenate: JVP, VJP
                  (the transpose) and batching side by side; iota, constants, dynamic shapes
    control_flow  while, if, case, map, return, tuples, optimization_barrier, custom_call, rng: the
                  derivatives and batching of while / if / case / optimization_barrier side by side
    collectives   the distributed and host-communication ops (no rules yet)
    loom_ops      loom's own dialects (ad, stack, knn): derivatives and batching of stop_gradient,
                  custom_jvp, custom_vjp, the stack ops, and the top-k ops (knn.approx_top_k, chlo.top_k)
    normalization batch_norm_training / inference / grad: kernels (numpy, torch)
    dynamic_shape dynamic_pad, dynamic_gather, dynamic_conv, real_dynamic_slice, set_dimension_size: kernels
    rng           the legacy stablehlo.rng: its kernel (a seeded generator per op)
    host          tokens, infeed / outfeed / send / recv through the host's callbacks (loom.host)
    quantization  uniform_quantize / uniform_dequantize, and dequantize-op-quantize for the ops the spec
                  allows on quantized tensors

The kernels (numpy, torch) of every family but the elementwise one are still in `loom.backend`;
each family module says where, and declares what its ops lack. The transformations' engines (the
reverse-mode, forward-mode and batching drivers) and the builders the rules share stay in
`loom.transforms` (`autodiff`, `forward_ad`, `batching`, `rule_builders`).

Importing `loom.ops` registers everything; `loom.backend` and `loom.transforms` import it once
they are loaded, so any use of their tables sees the rules.
"""

from loom.ops import (  # noqa: F401  (each registers its family's rules)
    async_collectives,
    collectives,
    control_flow,
    dynamic_shape,
    elementwise,
    host,
    indexing,
    linalg,
    loom_ops,
    mpmd,
    normalization,
    reductions,
    registry,
    rng,
    shape,
)

# isort: split
from loom.ops import quantization  # noqa: F401  (last: it wraps the kernels the families registered)
