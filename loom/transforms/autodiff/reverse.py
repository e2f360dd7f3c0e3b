"""Reverse-mode automatic differentiation as an IR-to-IR transformation.

`vjp_function(fn, wrt, cotangent_outputs)` takes a `func.func` of StableHLO and builds a new
`func.func` that takes the original arguments followed by one cotangent per chosen output, and
returns the original outputs followed by the cotangent (vector-Jacobian product) of each chosen
argument. The forward ops are copied, then walked in reverse; each op's cotangent rule, looked up
by op name in this transformation's own table `VJP_RULES` (as JAX's `ad.primitive_transposes`),
emits the ops computing the cotangents of its operands. Cotangents reaching one value from
several uses are summed with `stablehlo.add`. Values of integer or boolean type carry no
cotangent; an argument that receives none gets zeros. An op on the differentiated path without a
rule raises `MissingRuleError`, naming the op and the transformation.

A rule is `rule(builder, op, cotangents) -> list[Value | None]`: `op` is the copied forward op
(its operands and results are values of the new function), `cotangents` holds one entry per
result (None for a zero cotangent) and the rule returns one entry per operand (None for zero).
Only values that depend on the differentiated arguments (an activity analysis) get cotangents.

The rules live with their ops in `loom.ops`. Ops with regions capture values of enclosing scopes;
their rules (control flow in `loom.ops.control_flow`, `ad.custom_jvp` / `custom_vjp` in
`loom.ops.ad`) build a region's function (`region_function`), differentiate it with
`vjp_function`, inline the result (`inline_body`) and add the captured values' cotangents with
`accumulate_captured`. The rule of `stablehlo.while` rewrites the forward loop (`replace_op`) to
save what its backward loop needs on stacks of the `stack` dialect; a push or pop on an active
stack always has its rule run, so that gradients of gradients work through loops.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects import builtin, func, stablehlo
from loom.ir.attributes import TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FunctionType
from loom.transforms.autodiff.builders import full, is_float

TRANSFORMATION = "vjp"

VjpRule = Callable[[Builder, Operation, list["Value | None"]], list["Value | None"]]
VJP_RULES: dict[str, VjpRule] = {}


class MissingRuleError(NotImplementedError):
    """An op on the differentiated path has no rule in `VJP_RULES`."""


def lookup_rule(table: dict[str, Any], op: Operation, transformation: str = TRANSFORMATION,
                error: type[MissingRuleError] = MissingRuleError) -> Any:
    """The rule of `op` in a transformation's `table`; `error` naming the op, the transformation and
    the op's location when there is none."""
    rule = table.get(op.name)
    if rule is None:
        raise error(f"the {transformation} transformation has no rule for op '{op.name}' (at {op.location}); "
                    "add one to its op family in loom.ops")
    return rule

def no_gradient(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
    """The rule of an op whose operands get no cotangent."""
    return [None] * len(op.operands)


# --- the transformation ------------------------------------------------------------------------


class _State:
    """The cotangents being accumulated by one `vjp_function` call, visible to the rules of region
    ops (whose captured values are not operands) through `accumulate_captured`."""

    def __init__(self, builder: Builder, active: set[Value]) -> None:
        self.builder = builder
        self.active = active
        self.cotangents: dict[Value, Value] = {}
        self.replaced: dict[Value, Value] = {}

    def accumulate(self, v: Value, ct: Value | None) -> None:
        if ct is None or not is_float(v.type) or v not in self.active:
            return
        prev = self.cotangents.get(v)
        self.cotangents[v] = ct if prev is None else stablehlo.add(self.builder, prev, ct)

    def resolve(self, v: Value) -> Value:
        while v in self.replaced:
            v = self.replaced[v]
        return v


class _PerThread(threading.local):
    """Each thread differentiates on its own: the VJPs under way (innermost last) and, for the
    region functions they build, each argument standing for a captured value -> that value."""

    def __init__(self) -> None:
        self.states: list[_State] = []
        self.origins: dict[Value, Value] = {}


_LOCAL = _PerThread()


def thread_state() -> _PerThread:
    """This thread's VJPs under way and the captured values that region arguments stand for (vmap
    follows stacks of saved values through them)."""
    return _LOCAL


def current_state() -> _State:
    """The innermost `vjp_function` being built (for rules of ops with regions)."""
    return _LOCAL.states[-1]


def accumulate_captured(value: Value, ct: Value | None) -> None:
    """Add `ct` to the cotangent of `value`, a value captured by a region op (not its operand)."""
    _LOCAL.states[-1].accumulate(value, ct)


def is_active(value: Value) -> bool:
    """Whether `value` depends on a differentiated argument (only active values get cotangents)."""
    return value in _LOCAL.states[-1].active


def replace_op(old: Operation, new_values: Sequence[Value]) -> None:
    """Replace a forward op by the values of a rewritten one (a while that now counts its
    iterations and saves values) and erase it; the function's outputs follow the replacement."""
    state = _LOCAL.states[-1]
    for r, v in zip(old.results, new_values):
        r.replace_all_uses_with(v)
        state.replaced[r] = v
    old.erase()


def region_free_values(op: Operation, regions: Sequence[Any] | None = None) -> list[Value]:
    """Values used inside `regions` of `op` (all by default) but defined outside `op`, in order of
    first use."""
    seen: dict[Value, None] = {}
    for region in (op.regions if regions is None else regions):
        for block in region.blocks:
            for inner in block.ops:
                for nested in inner.walk():
                    for v in nested.operands:
                        owner = v.owner_op if v.owner_op is not None else v.parent_block.parent_op
                        if (owner is None or not op.is_ancestor(owner)) and v not in seen:
                            seen[v] = None
    return list(seen)


def _activity(ops: Sequence[Operation], seeds: Sequence[Value]) -> set[Value]:
    """The values that depend on `seeds`. A stack on which an active value is pushed is active
    (its pops give active values): that is what carries second-order gradients through loops."""
    active = set(seeds)
    for op in ops:
        inputs = list(op.operands)
        if op.regions:
            inputs += region_free_values(op)
        if op.name == "stack.push":
            if op.operands[1] in active:
                active.add(op.operands[0])
        elif any(v in active for v in inputs):
            active.update(op.results)
            for nested in op.walk():
                if nested.name == "stack.push" and not op.is_ancestor(defining_op(nested.operands[0])):
                    active.add(nested.operands[0])
    return active


def defining_op(v: Value) -> Operation | None:
    """The op defining `v`: its owner, or for a block argument the op holding the block."""
    return v.owner_op if v.owner_op is not None else v.parent_block.parent_op


BOUNDARY = "loom.vjp_boundary"
# a push or pop on an active stack always has its rule run (see vjp_function)
STACK_OPS = frozenset({"stack.push", "stack.pop"})


def vjp_function(fn: Operation, wrt: Sequence[int], cotangent_outputs: Sequence[int] | None = None,
                 name: str = "main", split: bool = False, active_args: Sequence[int] = ()) -> Operation:
    """A new `func.func @name` computing `fn`'s outputs and the VJP w.r.t. its arguments `wrt`.

    Its arguments are `fn`'s arguments followed by one cotangent per output in
    `cotangent_outputs` (all outputs by default; the others count as zero); its results are
    `fn`'s results followed by the cotangent of each argument in `wrt` (zeros for arguments of
    integer or boolean type or that the outputs do not depend on). With `split`, an unregistered
    `loom.vjp_boundary` op separates the forward ops from the backward ones (for the rules of loop
    ops, which move each part into its own loop). `active_args` are arguments that are active
    without being differentiated (stacks of saved values captured by a loop body)."""
    ftype: FunctionType = fn.properties["function_type"].value
    cotangent_outputs = list(range(len(ftype.results))) if cotangent_outputs is None else list(cotangent_outputs)
    new_type = FunctionType((*ftype.inputs, *(ftype.results[i] for i in cotangent_outputs)),
                            (*ftype.results, *(ftype.inputs[i] for i in wrt)))
    new = func.FuncOp.build(name, new_type, location=fn.location)
    block = new.regions[0].entry
    old_block = fn.regions[0].entry
    mapping: dict = dict(zip(old_block.args, block.args))
    if _LOCAL.states:  # a region's VJP: its arguments stand for the region function's (for vmap of stacks)
        _LOCAL.origins.update((n, o) for o, n in zip(old_block.args, block.args) if o in _LOCAL.origins)
    b = Builder(InsertionPoint.at_end(block))
    forward: list[Operation] = []
    ret = None
    for op in old_block.ops:
        if op.name == "func.return":
            ret = op
            break
        forward.append(b.insert(op.clone(mapping)))
    if ret is None:
        raise ValueError("the function has no func.return")
    outputs = [mapping.get(v, v) for v in ret.operands]
    if split:
        b.insert(Operation.create(BOUNDARY))

    state = _State(b, _activity(forward, [block.args[i] for i in (*wrt, *active_args)]))
    _LOCAL.states.append(state)
    try:
        for k, i in enumerate(cotangent_outputs):
            state.accumulate(outputs[i], block.args[len(ftype.inputs) + k])
        for op in reversed(forward):
            cts = [state.cotangents.pop(r, None) for r in op.results]
            # a push or pop on an active stack always has its rule run, so that the stack of
            # cotangents it feeds stays in step with the stack of values
            forced = (op.name in STACK_OPS and op.operands[0] in state.active) or (
                bool(op.regions) and any(n.name == "stack.push" and n.operands[0] in state.active
                                         for n in op.walk() if n is not op))
            if all(c is None for c in cts) and not forced:
                continue
            rule = lookup_rule(VJP_RULES, op)
            b.location = op.location
            operands = list(op.operands)  # the rule of a loop may replace (and erase) the op
            operand_cts = rule(b, op, cts)
            for v, ct in zip(operands, operand_cts):
                state.accumulate(v, ct)
    finally:
        _LOCAL.states.pop()
        if not _LOCAL.states:
            _LOCAL.origins.clear()
    results = [state.resolve(v) for v in outputs]
    for i in wrt:
        arg = block.args[i]
        ct = state.cotangents.get(arg)
        results.append(ct if ct is not None else full(b, 0, arg.type))
    b.insert(func.ReturnOp.build(results, fn.location))
    new.properties["function_type"] = TypeAttr(new_type)
    return new


def vjp_module(module: Operation, wrt: Sequence[int], cotangent_outputs: Sequence[int] | None = None,
               entry: str = "main") -> Operation:
    """A new `builtin.module` holding `vjp_function` of the module's function `entry` as `@main`."""
    fn = next((op for op in module.regions[0].entry.ops
               if op.name == "func.func" and op.properties["sym_name"].value == entry), None)
    if fn is None:
        raise ValueError(f"the module has no function @{entry}")
    out = builtin.ModuleOp.build()
    out.body.append(vjp_function(fn, wrt, cotangent_outputs, "main"))
    return out


# --- builders for the rules of ops with regions (loom.ops.control_flow, loom.ops.ad) ------------


def region_function(region: Any, free: Sequence[Value], name: str = "region") -> Operation:
    """A detached `func.func` computing a one-block region: its arguments are the block's
    arguments followed by the values in `free` (those the region captures), its results the
    operands of the region's terminator."""
    block = region.entry
    ret = block.last_op
    types_in = (*(a.type for a in block.args), *(v.type for v in free))
    fn = func.FuncOp.build(name, FunctionType(types_in, tuple(v.type for v in ret.operands)))
    fb = fn.regions[0].entry
    mapping: dict = dict(zip(block.args, fb.args))
    mapping.update(zip(free, fb.args[len(block.args):]))
    _LOCAL.origins.update(zip(fb.args[len(block.args):], free))
    for o in block.ops:
        if o is ret:
            fb.append(func.ReturnOp.build([mapping.get(v, v) for v in o.operands]))
            break
        fb.append(o.clone(mapping))
    return fn


def inline_body(bb: Builder, fb: Any, mapping: dict, skip: int = 0) -> list[Value]:
    """Clone the ops of a block `fb` (a function's or a region's body) into `bb`, all but its
    terminator; return the terminator's mapped operands after the first `skip`."""
    last = fb.last_op
    for o in fb.ops:
        if o is last:
            return [mapping.get(v, v) for v in o.operands[skip:]]
        bb.insert(o.clone(mapping))
    raise ValueError("the block has no terminator")


_inline_body = inline_body  # the name the collectives' rules import


__all__ = ["BOUNDARY", "STACK_OPS", "TRANSFORMATION", "VJP_RULES", "MissingRuleError", "VjpRule",
           "accumulate_captured", "current_state", "defining_op", "inline_body", "is_active", "lookup_rule",
           "no_gradient", "region_free_values", "region_function", "replace_op", "thread_state", "vjp_function",
           "vjp_module"]
