"""Batching (vectorization) as an IR-to-IR transformation: the `vmap` transformation.

`vmap_function(fn, in_dims, axis_size, out_dims)` takes a `func.func` of StableHLO over
per-example values and builds a new `func.func` over batched values: argument `i` gets a batch
dimension of size `axis_size` inserted at axis `in_dims[i]` (None: the argument is shared by the
whole batch), and result `j` has the batch dimension at axis `out_dims[j]` (None: the result must
not depend on a batched value). The ops are copied in order; an op whose operands are all
unbatched is copied as it is (constants, iotas, computations on shared arguments); any other op is
handed to its rule, looked up by op name in this transformation's own table `BATCH_RULES` (as
JAX's `batching.primitive_batchers`). An op with a batched operand and no rule raises
`MissingRuleError`, naming the op, the transformation and the op's location.

A rule is `rule(builder, op, args, batch_dims) -> (results, out_batch_dims)`: `op` is the original
op, `args` its operands in the new function, `batch_dims` one entry per operand (the axis of the
batch dimension, or None for an unbatched value), and the rule returns one value and one batch
dimension per result.

The rules live with their ops in `loom.ops`. Those of ops with regions (control flow in
`loom.ops.control_flow`, `ad.custom_vjp` / `custom_jvp` in `loom.ops.ad`) batch each region
with `vmap_region` on the values the op captures (`captured`) and inline it (`inline_function`).
Values a gradient saves on stacks are pushed lane by lane (`split_stack`), and every pop of such a
stack pops the lanes back (`is_split_stack`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects import builtin, func, stablehlo
from loom.ir.attributes import TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FunctionType, RankedTensorType
from loom.transforms import autodiff
from loom.transforms.autodiff import thread_state as reverse_state

TRANSFORMATION = "vmap"

BatchRule = Callable[[Builder, Operation, list[Value], list["int | None"]], tuple[list[Value], list["int | None"]]]
BATCH_RULES: dict[str, BatchRule] = {}


class MissingRuleError(autodiff.MissingRuleError):
    """An op with a batched operand has no rule in `BATCH_RULES` (or its rule cannot handle it).
    One error type for every transformation's missing rules (vjp, jvp, vmap)."""


# --- helpers -----------------------------------------------------------------------------------


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def batched_type(t: RankedTensorType, size: int, axis: int = 0) -> RankedTensorType:
    shape = list(t.shape)
    shape.insert(axis, size)
    return RankedTensorType(tuple(shape), t.element_type, t.encoding)


def moveaxis(b: Builder, v: Value, src: int, dst: int) -> Value:
    """`v` with axis `src` moved to position `dst` (a transpose; `v` itself when they are equal)."""
    if src == dst:
        return v
    perm = [i for i in range(len(_shape(v))) if i != src]
    perm.insert(dst, src)
    return stablehlo.transpose(b, v, perm)


def bdim_to_front(b: Builder, v: Value, d: int | None, size: int) -> Value:
    """`v` with its batch dimension at axis 0; an unbatched `v` is broadcast along a new axis 0."""
    if d is None:
        shape = _shape(v)
        return stablehlo.broadcast_in_dim(b, v, (size, *shape), list(range(1, len(shape) + 1)))
    return moveaxis(b, v, d, 0)


def _size(args: Sequence[Value], dims: Sequence[int | None]) -> int:
    return next(_shape(v)[d] for v, d in zip(args, dims) if d is not None)


# --- rules -------------------------------------------------------------------------------------


def _elementwise(b, op, args, dims):
    """Elementwise ops (and select / clamp with scalar operands): batch dimension at 0 everywhere."""
    size = _size(args, dims)
    rank = max(len(_shape(r)) for r in op.results)
    new_args = []
    for v, d in zip(args, dims):
        if d is None:
            if len(_shape(v)) == 0 and rank > 0:
                new_args.append(v)  # a scalar operand of select / clamp stays shared
                continue
            v = bdim_to_front(b, v, None, size)
        else:
            v = moveaxis(b, v, d, 0)
            if len(_shape(v)) - 1 != rank:  # a batched scalar operand of select / clamp
                v = stablehlo.broadcast_in_dim(b, v, (size, *_shape(op.results[0])), [0])
        new_args.append(v)
    types = [batched_type(r.type, size) for r in op.results]
    new = b.create(op.name, new_args, types, dict(op.properties), dict(op.attributes))
    return list(new.results), [0] * len(types)


# Every op with the `Elementwise` trait gets `elementwise_rule` from loom.ops.elementwise.
elementwise_rule = _elementwise


# --- what the rules of ops with regions and of stacks read -------------------------------------


class _State:
    """The function being batched: old values -> new ones, their batch dimensions, the size."""

    def __init__(self, mapping: dict, bdims: dict, size: int) -> None:
        self.mapping = mapping
        self.bdims = bdims
        self.size = size


class _PerThread(threading.local):
    """Each thread batches on its own: the vmaps under way (innermost last), the stacks on which
    batched values are pushed lane by lane (their pops are batched), and whether each result of
    the thread's last `vmap_function` was batched before `out_dims` were applied."""

    def __init__(self) -> None:
        self.states: list[_State] = []
        self.split_stacks: set[Any] = set()
        self.batched_outputs: list[bool] = []


_LOCAL = _PerThread()


def axis_size() -> int:
    """The batch size of the innermost `vmap_function` being built."""
    return _LOCAL.states[-1].size


def _stack_root(s: Value) -> Any:
    """What identifies the run-time stack `s`: the captured value a region argument stands for,
    and for a `stack.companion` the companion of its stack's root (one per stack, however many
    companion ops ask for it)."""
    while s in reverse_state().origins:
        s = reverse_state().origins[s]
    owner = s.owner_op
    if owner is not None and owner.name == "stack.companion":
        return ("companion", _stack_root(owner.operands[0]))
    return s


def split_stack(s: Value) -> None:
    """Record that batched values are pushed on the stack `s` lane by lane (its pops are batched)."""
    _LOCAL.split_stacks.add(_stack_root(s))


def is_split_stack(s: Value) -> bool:
    """Whether batched values are pushed on the stack `s` lane by lane."""
    return _stack_root(s) in _LOCAL.split_stacks


def _pops_split(op: Operation, mapping: dict) -> bool:
    return any(n.name == "stack.pop" and is_split_stack(mapping.get(n.operands[0], n.operands[0]))
               for n in op.walk() if n is not op)


def captured(b: Builder, op: Operation, all_batched: bool = False) -> tuple[list[Value], list[Value],
                                                                             list[int | None]]:
    """The values `op` captures: (old values, new values with any batch dim at 0, their dims)."""
    st = _LOCAL.states[-1]
    free = autodiff.region_free_values(op)
    vals, dims = [], []
    for v in free:
        nv = st.mapping.get(v, v)
        d = st.bdims.get(nv)
        if d is not None or all_batched:
            nv, d = bdim_to_front(b, nv, d, st.size), 0
        vals.append(nv)
        dims.append(d)
    return free, vals, dims


def vmap_region(region: object, free: list[Value], arg_dims: list[int | None], free_dims: list[int | None],
                size: int, out_dims: Sequence[int | None] | int | None) -> tuple[Operation, list[bool]]:
    """The batched function of a one-block region (its arguments, then the captured values `free`)
    and whether each of its results was batched before `out_dims` were applied."""
    fn = autodiff.region_function(region, free)
    out = vmap_function(fn, [*arg_dims, *free_dims], size, out_dims)
    return out, list(_LOCAL.batched_outputs)


def inline_function(bb: Builder, fn: Operation, values: Sequence[Value]) -> list[Value]:
    """The ops of function `fn` cloned into `bb` on the arguments `values`; its results."""
    block = fn.regions[0].entry
    return autodiff.inline_body(bb, block, dict(zip(block.args, values)))


# --- the transformation ------------------------------------------------------------------------


def vmap_function(fn: Operation, in_dims: Sequence[int | None], axis_size: int,
                  out_dims: Sequence[int | None] | int | None = 0, name: str = "main") -> Operation:
    """A new `func.func @name` computing `fn` over a batch of `axis_size` examples (see the module
    docstring for `in_dims` and `out_dims`; an int or None `out_dims` applies to every result)."""
    ftype: FunctionType = fn.properties["function_type"].value
    if len(in_dims) != len(ftype.inputs):
        raise ValueError(f"in_dims has {len(in_dims)} entries but the function has {len(ftype.inputs)} arguments")
    if out_dims is None or isinstance(out_dims, int):
        out_dims = [out_dims] * len(ftype.results)
    in_dims = [None if d is None else d % (len(t.shape) + 1) for d, t in zip(in_dims, ftype.inputs)]
    out_dims = [None if d is None else d % (len(t.shape) + 1) for d, t in zip(out_dims, ftype.results)]
    inputs = [t if d is None else batched_type(t, axis_size, d) for t, d in zip(ftype.inputs, in_dims)]
    results = [t if d is None else batched_type(t, axis_size, d) for t, d in zip(ftype.results, out_dims)]
    new_type = FunctionType(tuple(inputs), tuple(results))
    new = func.FuncOp.build(name, new_type, location=fn.location)
    block = new.regions[0].entry
    old_block = fn.regions[0].entry
    mapping: dict = dict(zip(old_block.args, block.args))
    bdims: dict[Value, int] = {a: d for a, d in zip(block.args, in_dims) if d is not None}
    b = Builder(InsertionPoint.at_end(block))
    ret = None
    origins = reverse_state().origins  # a region's arguments -> the captured values (stacks of saved values)
    origins.update((n, o) for o, n in zip(old_block.args, block.args) if o in origins)
    _LOCAL.states.append(_State(mapping, bdims, axis_size))
    try:
        for old in old_block.ops:
            if old.name == "func.return":
                ret = old
                break
            args = [mapping.get(v, v) for v in old.operands]
            ds = [bdims.get(v) for v in args]
            # a region op that captures a batched value is batched too
            captured = old.regions and (any(bdims.get(mapping.get(v, v)) is not None
                                                for v in autodiff.region_free_values(old)) or _pops_split(old, mapping))
            if old.name == "stack.pop" and is_split_stack(args[0]):
                captured = True
            if all(d is None for d in ds) and not captured:
                new_op = b.insert(old.clone(mapping))
                if old.name == "stack.new":
                    origins[new_op.results[0]] = old.results[0]
                continue
            rule = autodiff.lookup_rule(BATCH_RULES, old, TRANSFORMATION, MissingRuleError)
            b.location = old.location
            outs, out_ds = rule(b, old, args, ds)
            for r, v, d in zip(old.results, outs, out_ds):
                mapping[r] = v
                if d is not None:
                    bdims[v] = d
    finally:
        _LOCAL.states.pop()
        if not _LOCAL.states and not reverse_state().states:
            origins.clear()
            _LOCAL.split_stacks.clear()
    if ret is None:
        raise ValueError("the function has no func.return")
    b.location = fn.location
    _LOCAL.batched_outputs.clear()
    _LOCAL.batched_outputs.extend(bdims.get(mapping.get(v, v)) is not None for v in ret.operands)
    values = []
    for i, (v, d) in enumerate(zip(ret.operands, out_dims)):
        v = mapping.get(v, v)
        vd = bdims.get(v)
        if d is None:
            if vd is not None:
                raise ValueError(f"vmap has out_axes None for result {i}, but it is batched (it depends on a "
                                 f"batched argument)")
            values.append(v)
            continue
        values.append(moveaxis(b, bdim_to_front(b, v, vd, axis_size), 0, d))
    b.insert(func.ReturnOp.build(values, fn.location))
    new.properties["function_type"] = TypeAttr(new_type)
    return new


def vmap_module(module: Operation, in_dims: Sequence[int | None], axis_size: int,
                out_dims: Sequence[int | None] | int | None = 0, entry: str = "main") -> Operation:
    """A new `builtin.module` holding `vmap_function` of the module's function `entry` as `@main`."""
    fn = next((op for op in module.regions[0].entry.ops
               if op.name == "func.func" and op.properties["sym_name"].value == entry), None)
    if fn is None:
        raise ValueError(f"the module has no function @{entry}")
    out = builtin.ModuleOp.build()
    out.body.append(vmap_function(fn, in_dims, axis_size, out_dims, "main"))
    return out


__all__ = ["BATCH_RULES", "TRANSFORMATION", "BatchRule", "MissingRuleError", "axis_size", "batched_type",
           "bdim_to_front", "captured", "elementwise_rule", "inline_function", "is_split_stack", "moveaxis",
           "split_stack", "vmap_function", "vmap_module", "vmap_region"]
