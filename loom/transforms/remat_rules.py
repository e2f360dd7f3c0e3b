"""Rematerialization (`loom.checkpoint`): the markers, the policies and the VJP of a region.

`loom.checkpoint` brackets a traced function between two barriers: a start marker (attribute
`loom.remat_start`) over the function's inputs and the values it captures, and an end marker
(`loom.remat_end`, `loom.remat_outputs` = the number of outputs, `loom.remat_policy`) over its
outputs followed by the start marker's results. The end marker's VJP (`remat_vjp`, called by the
rule of `stablehlo.optimization_barrier` in `loom.ops.control_flow`) recomputes the function's ops
from the start marker's values behind a fresh barrier (which also holds the cotangents, so nothing
can hoist the recomputation into the forward pass or merge it with the original by CSE),
differentiates the recomputed ops with the rules of `VJP_RULES`, and returns the cotangents of the
start marker's values; the original intermediates are then used by nothing but the forward pass,
so they need not be kept. A policy may name ops whose results are saved
instead (`saveable(op) -> bool`), as JAX's checkpoint policies.
"""

from __future__ import annotations

from collections.abc import Callable

from loom.dialects import stablehlo
from loom.ir.attributes import IntegerAttr, StringAttr
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, is_float, lookup_rule

BARRIER = "stablehlo.optimization_barrier"
START, END, OUTPUTS, POLICY = "loom.remat_start", "loom.remat_end", "loom.remat_outputs", "loom.remat_policy"


def _nothing_saveable(op: Operation) -> bool:
    return False


def _everything_saveable(op: Operation) -> bool:
    return True


def _dots_saveable(op: Operation) -> bool:
    return op.name in ("stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution")


def _dots_with_no_batch_dims_saveable(op: Operation) -> bool:
    if op.name == "stablehlo.dot_general":
        dn = op.properties["dot_dimension_numbers"]
        return not dn.lhs_batching_dimensions
    return op.name in ("stablehlo.dot", "stablehlo.convolution")


POLICIES: dict[str, Callable[[Operation], bool]] = {
    "nothing_saveable": _nothing_saveable,
    "everything_saveable": _everything_saveable,
    "dots_saveable": _dots_saveable,
    "dots_with_no_batch_dims_saveable": _dots_with_no_batch_dims_saveable,
}


def register_policy(policy: Callable[[Operation], bool]) -> str:
    """The name under which `policy` is known to the rule (registering it if needed)."""
    for name, fn in POLICIES.items():
        if fn is policy:
            return name
    name = f"policy_{len(POLICIES)}_{getattr(policy, '__name__', 'custom')}"
    POLICIES[name] = policy
    return name


def _attr_int(op: Operation, name: str) -> int | None:
    attr = op.attributes.get(name)
    return None if attr is None else int(attr.value)


def _body(end: Operation, start: Operation) -> list[Operation]:
    """The ops computing the end marker's outputs from the start marker's values, in order."""
    n_out = _attr_int(end, OUTPUTS) or 0
    block = end.parent
    seen: set[int] = set()
    stack = [v.owner_op for v in end.operands[:n_out]]
    while stack:
        op = stack.pop()
        if op is None or op is start or id(op) in seen or op.parent is not block:
            continue
        seen.add(id(op))
        stack.extend(v.owner_op for v in _used_values(op))
    return [op for op in block.ops if id(op) in seen]


def _used_values(op: Operation) -> list[Value]:
    """The operands of `op` and the values its regions use from outside them."""
    values = list(op.operands)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                values.extend(v for v in _used_values(inner) if v.parent_block is not block)
    return values


def _accumulate(b: Builder, cts: dict, v: Value, ct: Value | None) -> None:
    if ct is None or not is_float(v.type):
        return
    prev = cts.get(v)
    cts[v] = ct if prev is None else stablehlo.add(b, prev, ct)


def remat_vjp(b: Builder, end: Operation, cts: list[Value | None]) -> list[Value | None]:
    """The VJP of the end marker `end` of a `loom.checkpoint` region: the region recomputed from
    its start marker's values and differentiated (the rule of optimization_barrier calls it)."""
    n_out = _attr_int(end, OUTPUTS) or 0
    inputs = list(end.operands[n_out:])
    start = inputs[0].owner_op if inputs else None
    if start is None or start.name != BARRIER or _attr_int(start, START) != _attr_int(end, END):
        raise MissingRuleError(f"the vjp rule of loom.checkpoint did not find the start marker of its region "
                               f"(at {end.location})")
    policy_attr = end.attributes.get(POLICY)
    saveable = POLICIES.get(policy_attr.value if policy_attr is not None else "nothing_saveable", _nothing_saveable)
    body = _body(end, start)
    live = [c for c in cts[:n_out] if c is not None]
    # the recomputation starts from a barrier over the inputs and the cotangents
    barrier = stablehlo.OptimizationBarrierOp.build(b, [*inputs, *live])
    mapping: dict = dict(zip(inputs, barrier.results[:len(inputs)]))
    live_cts = iter(barrier.results[len(inputs):])
    # (the op the rule sees, the values its cotangents are keyed by, the saved op if saveable)
    recomputed: list[tuple[Operation, list[Value], Operation | None]] = []
    for op in body:
        clone = b.insert(op.clone(mapping))
        if saveable(op):
            # downstream recomputed ops read the saved forward results; the clone only serves the
            # rule, whose operands must be the recomputed values the cotangents flow to
            for r in op.results:
                mapping[r] = r
            recomputed.append((clone, list(op.results), op))
        else:
            recomputed.append((clone, list(clone.results), None))
    cotangents: dict[Value, Value] = {}
    for v, c in zip(end.operands[:n_out], cts[:n_out]):
        if c is not None:
            _accumulate(b, cotangents, mapping.get(v, v), next(live_cts))
    for op, keys, saved in reversed(recomputed):
        op_cts = [cotangents.pop(r, None) for r in keys]
        if all(c is None for c in op_cts):
            if saved is not None and not any(r.has_uses for r in op.results):
                op.erase()
            continue
        rule = lookup_rule(VJP_RULES, op)
        b.location = op.location
        for v, c in zip(op.operands, rule(b, op, op_cts)):
            _accumulate(b, cotangents, v, c)
        if saved is not None:  # the rule reads the saved results, not recomputed ones
            for r, orig in zip(op.results, saved.results):
                r.replace_all_uses_with(orig)
            op.erase()
    b.location = end.location
    return [None] * n_out + [cotangents.get(mapping[v]) for v in inputs]


def mark(op: Operation, kind: str, region: int, outputs: int | None = None, policy: str | None = None) -> None:
    """Set the attributes of a start (`kind` START) or end (END) marker of remat region `region`."""
    op.attributes[kind] = IntegerAttr.get(region)
    if outputs is not None:
        op.attributes[OUTPUTS] = IntegerAttr.get(outputs)
    if policy is not None:
        op.attributes[POLICY] = StringAttr(policy)


__all__ = ["END", "OUTPUTS", "POLICIES", "POLICY", "START", "mark", "register_policy", "remat_vjp"]


used_values = _used_values  # public for the front end (checkpoint and linearize walk the same uses)
