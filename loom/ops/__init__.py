"""Op rules, one module per op family: everything loom knows about an op besides its declaration
(kernels, derivative, batching, codegen), next to the op, filling the tables the backends and
transformations read (`KERNELS`, `TORCH_KERNELS`, `CODEGEN_RULES`, `INTERPRETER_RULES`,
`JVP_RULES`, `VJP_RULES`, `BATCH_RULES`).

    registry      the rule tables, `unsupported("reason")`, `declare`, the coverage walk
    elementwise   StableHLO's and CHLO's elementwise ops: one declarative row per op
    shape         reshape, broadcast, transpose, slice, pad, concatenate, reverse, iota, ...
    reductions    reduce, reduce_window, select_and_scatter, sort, top_k
    indexing      gather, scatter, dynamic_slice, dynamic_update_slice
    linalg        dot_general, convolution, fft and the linear-algebra ops loom lacks
    control_flow  while, if, case, map, call-like ops, optimization_barrier, custom_call
    collectives   the distributed ops (no rules yet)
    loom_ops      loom's own dialects: ad, stack, knn

Importing `loom.ops` registers everything; `loom.backend` and `loom.transforms` import it once
they are loaded, so any use of their tables sees the rules.
"""

from loom.ops import (  # noqa: F401  (each registers its family's rules)
    collectives,
    control_flow,
    elementwise,
    indexing,
    linalg,
    loom_ops,
    reductions,
    registry,
    shape,
)
