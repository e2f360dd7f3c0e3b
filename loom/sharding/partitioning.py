"""`partition(module)`: the per-device program of a global program with shardings.

    local = partition(loom.ir.parse(jax_text))   # the input is left as it was

runs the pass pipeline `sharding-propagation,spmd-partition` (verifying after each pass) on a
copy of `module`: every value gets a sharding, then every op is partitioned. Calls (JAX writes
private functions for relu, logsumexp, ...) are inlined first (`inline{default-pipeline=},symbol-dce`). The result keeps
the `sdy.mesh` op and the module's attributes; `@main` takes and returns local shards (uneven
dimensions padded up to ceil(n / pieces)), and each of its arguments and results carries its
final `sdy.sharding` (fully closed) and `loom.global_type`. Ops without a sharding rule are run
replicated; `loom.ir.diagnostics.collect_remarks()` gathers the remarks saying which and where.
"""

from __future__ import annotations

from loom.ir.core import Operation
from loom.rewrite.pass_manager import PassManager

PIPELINE = "sharding-propagation,spmd-partition"
INLINE = "inline{default-pipeline=},symbol-dce"


def partition(module: Operation) -> Operation:
    """A new, partitioned module (see the module's doc); `module` is not changed."""
    import loom.transforms.sharding_propagation  # noqa: F401  (registers the passes)
    import loom.transforms.spmd_partition  # noqa: F401
    copy = module.clone()
    if any(op.name == "func.call" for op in copy.walk()):
        PassManager.parse(INLINE).run(copy)
    PassManager.parse(PIPELINE).run(copy)
    copy.verify()
    return copy


__all__ = ["PIPELINE", "partition"]
