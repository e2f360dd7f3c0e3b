"""Op rules, one module per op family: everything loom knows about an op besides its declaration
(kernels, derivative, batching, codegen), next to the op, filling the tables the backends and
transformations read (`KERNELS`, `TORCH_KERNELS`, `CODEGEN_RULES`, `INTERPRETER_RULES`,
`JVP_RULES`, `VJP_RULES`, `BATCH_RULES`).

    registry      the rule tables, `unsupported("reason")`, `declare`, the coverage walk
    elementwise   StableHLO's and CHLO's elementwise ops: one declarative row per op (kernels,
                  one derivative for both modes, lax / loom.numpy names; batching from the trait)
    indexing      gather, scatter, dynamic_slice, dynamic_update_slice: kernels, codegen, derivatives, batching
    linalg        dot_general, convolution, fft and the ops loom lacks: kernels, derivatives, batching
    reductions    reduce, reduce_window, sort, select_and_scatter, top_k: kernels, codegen, derivatives, batching
    shape         reshape, broadcast_in_dim, transpose, reverse, slice, pad, concatenate: JVP, VJP
                  (the transpose) and batching side by side; iota, constants, dynamic shapes
    control_flow  while, if, case, map, return, tuples, optimization_barrier, custom_call, rng: the
                  derivatives and batching of while / if / case / optimization_barrier side by side
    collectives   the distributed and host-communication ops (no rules yet)
    topk          knn.approx_top_k and chlo.top_k: derivatives, batching, sharding
    stack         the stack dialect (saved values of reverse-mode loops): kernels, derivatives, batching
    ad            the ad dialect (stop_gradient, custom_jvp, custom_vjp): kernels, derivatives, batching
    normalization batch_norm_training / inference / grad: kernels (numpy, torch)
    dynamic_shape dynamic_pad, dynamic_gather, dynamic_conv, real_dynamic_slice, set_dimension_size: kernels
    rng           the legacy stablehlo.rng: its kernel (a seeded generator per op)
    host          tokens, infeed / outfeed / send / recv through the host's callbacks (loom.host)
    quantization  uniform_quantize / uniform_dequantize, and dequantize-op-quantize for the ops the spec
                  allows on quantized tensors

Each family module holds its ops' numpy kernels, region-op code generation rules (one per op, for
numpy and torch code) and reference interpreter rules in a section after its imports
(`# Kernels ---`); its torch kernels, and the run-time helpers of the torch code its code
generation rules emit, are in `<family>_torch` (elementwise,
shape, indexing, linalg, reductions, rng), which imports torch: `common.torch_kernels_in` names it,
and `loom.backend.torch_kernels` imports it when torch is first used, never at `import loom`.
What stays in `loom.backend` is the machinery: the kernel tables
(`kernels`, `torch_kernels`: markers, dtypes, the numpy fallback, unsigned views, helpers several
families share), the interpreter, and the compiled executor (`compiled.codegen`, its region
analysis `compiled.regions`, `compiled.executables`). The transformations' engines (the reverse-mode,
forward-mode and batching drivers) stay in `loom.transforms`; each family module declares what its
ops lack. Shared IR builders are in `loom.transforms.rule_builders`.

Importing `loom.ops` registers everything; `loom.backend` and `loom.transforms` import it once
they are loaded, so any use of their tables sees the rules.
"""

from loom.ops import (  # noqa: F401  (each registers its family's rules)
    ad,
    async_collectives,
    collectives,
    control_flow,
    dynamic_shape,
    elementwise,
    host,
    indexing,
    linalg,
    mpmd,
    normalization,
    reductions,
    registry,
    rng,
    shape,
    stack,
    topk,
)

# isort: split
from loom.ops import quantization  # noqa: F401  (last: it wraps the kernels the families registered)
