"""`loom.checkpoint` (alias `loom.remat`): rematerialization. The backward pass recomputes the
checkpointed function's intermediates from its inputs instead of keeping them from the forward
pass, trading compute for memory, as `jax.checkpoint`.

While tracing, the function's ops are bracketed by two `stablehlo.optimization_barrier` markers
(see `loom.transforms.remat_rules`): the start marker over its array inputs and the traced values
it captures, the end marker over its outputs. Every transformation sees the markers as identities,
except reverse mode, whose rule for the end marker recomputes the bracketed ops behind a fresh
barrier and differentiates the recomputation. Called outside tracing, the function just runs.

`policy(op) -> bool` names ops whose results may be saved rather than recomputed; the
`checkpoint_policies` namespace has JAX's common ones (`nothing_saveable`, the default,
`everything_saveable`, `dots_saveable`, `dots_with_no_batch_dims_saveable`).
"""

from __future__ import annotations

import functools
import itertools
import types
from collections.abc import Callable
from typing import Any

from loom.dialects import stablehlo
from loom.frontend.pytree import tree_flatten, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace, lift
from loom.ir.core import Operation, Value
from loom.transforms import remat_rules

_REGIONS = itertools.count(1)

checkpoint_policies = types.SimpleNamespace(**remat_rules.POLICIES)


def _captured(block: Any, start: Operation) -> list[Value]:
    """Values the ops after `start` use that are defined before it (block arguments or results of
    earlier ops), in first-use order; constants and iotas are recomputed instead."""
    ops = list(block.ops)
    position = {id(op): i for i, op in enumerate(ops)}
    first = position[id(start)]
    seen: dict[int, Value] = {}
    for op in ops[first + 1:]:
        for v in remat_rules.used_values(op):
            owner = v.owner_op
            if owner is not None and (owner.parent is not block or position.get(id(owner), -1) >= first):
                continue
            if owner is not None and owner.name in ("stablehlo.constant", "stablehlo.iota"):
                continue
            seen.setdefault(id(v), v)
    return list(seen.values())


def checkpoint(fun: Callable[..., Any] | None = None, *, prevent_cse: bool = True,
               policy: Callable[[Operation], bool] | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Any:
    """`fun` made to recompute its intermediates in the backward pass instead of saving them.
    Usable as `checkpoint(f)` or as a decorator `@checkpoint` / `@checkpoint(policy=...)`.
    `prevent_cse=False` lets CSE merge the recomputation with the forward pass (it then saves
    nothing); `static_argnums` is accepted for JAX compatibility (non-array arguments are always
    static in loom)."""
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)
    policy_name = remat_rules.register_policy(policy) if policy is not None else "nothing_saveable"

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        trace = current_trace()
        leaves, tree = tree_flatten((args, kwargs))
        if trace is None or not any(isinstance(x, Tracer) for x in leaves):
            return fun(*args, **kwargs)
        region = next(_REGIONS)
        block = trace.func.entry_block
        positions = [i for i, x in enumerate(leaves) if isinstance(x, Tracer)]
        b = trace.emit()
        start = stablehlo.OptimizationBarrierOp.build(b, [leaves[i].value for i in positions])
        inner = list(leaves)
        for k, i in enumerate(positions):
            inner[i] = Tracer(start.results[k], trace, leaves[i].weak)
        in_args, in_kwargs = tree_unflatten(tree, inner)
        out = fun(*in_args, **in_kwargs)
        out_leaves, out_tree = tree_flatten(out)
        outs = [lift(trace, x) for x in out_leaves]
        # route captured values through the start marker too, so that every bracketed op
        # depends on it and the rule can hand their cotangents back
        captured = _captured(block, start)
        if captured:
            values = [*start.operands, *captured]
            new_start = stablehlo.OptimizationBarrierOp.build(None, values)
            block.insert_before(new_start, start)
            n = len(start.results)
            body_ops = {id(op) for op in itertools.islice(block.ops, _index(block, start) + 1, None)}
            for old, new in zip(start.results, new_start.results[:n]):
                old.replace_all_uses_with(new)
            for v, new in zip(captured, new_start.results[n:]):
                v.replace_uses_if(new, lambda use: id(_top_level(use.owner, block)) in body_ops)
            start.erase()
            start = new_start
        remat_rules.mark(start, remat_rules.START, region)
        b = trace.emit()
        if not prevent_cse:
            return tree_unflatten(out_tree, outs)
        end = stablehlo.OptimizationBarrierOp.build(b, [*(t.value for t in outs), *start.results])
        remat_rules.mark(end, remat_rules.END, region, len(outs), policy_name)
        results = [Tracer(v, trace, t.weak) for v, t in zip(end.results, outs)]
        return tree_unflatten(out_tree, results)

    return wrapped


remat = checkpoint


def _index(block: Any, op: Operation) -> int:
    for i, o in enumerate(block.ops):
        if o is op:
            return i
    raise ValueError("op is not in the block")


def _top_level(op: Operation, block: Any) -> Operation:
    """The ancestor of `op` (or `op`) directly in `block`."""
    while op.parent is not block:
        op = op.parent_op
    return op


__all__ = ["checkpoint", "checkpoint_policies", "remat"]
