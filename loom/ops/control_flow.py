"""Control flow and structure: while, if, case, map, return, tuples, optimization_barrier,
custom_call, composite, scan, random bits.

Code generation in `loom.backend.compiled` (regions inlined in the generated Python), the
interpreter's rules in `loom.backend.interpreter`, derivatives in `loom.transforms.autodiff` /
`forward_ad` (explicit: reverse mode through a while loop stores its carries on a stack) and
`remat_rules` (optimization_barrier), batching in `loom.transforms.batching`. What they lack is
declared here.
"""

from __future__ import annotations

from loom.ops.registry import declare, register, unsupported
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors, identity_rule, shape_of

declare("stablehlo.return", unsupported("a region terminator: the rule of the op holding the region handles it"))
declare(["stablehlo.tuple", "stablehlo.get_tuple_element"],
        unsupported("tuples appear only in programs exported by JAX, which loom runs but does not transform"),
        tables=("jvp", "vjp", "batching"))
declare(["stablehlo.custom_call", "stablehlo.map"],
        unsupported("an opaque target or a region applied per element: not transformed yet"),
        tables=("jvp", "vjp", "batching"))
declare("stablehlo.composite", unsupported("runs its decomposition in the interpreter only"),
        tables=("numpy", "torch", "jvp", "vjp", "batching"))
declare("stablehlo.rng_bit_generator", unsupported("random bits: no derivative; loom.random batches keys itself"),
        tables=("jvp", "vjp", "batching"))
declare("chlo.scan", unsupported("parsed and printed only: loom.lax.scan lowers to stablehlo.while"))


def _region_carries(op):
    """while / if / case: both sharding passes handle them structurally (a carry, the block
    arguments and the values the regions return share one sharding; predicates stay whole), so
    the rule table only records that they are handled."""
    return None


def _barrier_sharding(op):
    """optimization_barrier: each result is its operand."""
    f = Factors()
    dims = [[f.new(n) for n in shape_of(v)] for v in op.operands]
    return f.rule(dims, dims)


for _name in ("stablehlo.while", "stablehlo.if", "stablehlo.case"):
    register(SHARDING_RULES, _name, _region_carries)
register(SHARDING_RULES, "stablehlo.optimization_barrier", _barrier_sharding)
register(SHARDING_RULES, "stablehlo.map", identity_rule)
declare(["stablehlo.tuple", "stablehlo.get_tuple_element", "stablehlo.custom_call", "stablehlo.composite",
         "stablehlo.rng_bit_generator", "stablehlo.rng"],
        unsupported("tuples, opaque targets and random bits: run replicated"), tables=("sharding",))
