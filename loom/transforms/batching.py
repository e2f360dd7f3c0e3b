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

Control flow follows JAX: a `stablehlo.while` whose predicate is batched runs until every lane is
done, finished lanes kept by a select; `if` / `case` with a batched selector run every branch and
select per lane, each branch's inputs masked (a bit-exact copy without cotangent on the lanes it
does not own) so no NaN or inf of an unselected branch reaches a gradient. Values a gradient saves
on stacks are pushed lane by lane; a forward loop with per-lane trip counts that saves values
starts the shorter lanes late (after a counting pass) so the backward loop pops them in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.dialects import builtin, func, stablehlo
from loom.ir.attributes import TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FunctionType, IntegerType, RankedTensorType
from loom.transforms import autodiff

TRANSFORMATION = "vmap"

BatchRule = Callable[[Builder, Operation, list[Value], list["int | None"]], tuple[list[Value], list["int | None"]]]
BATCH_RULES: dict[str, BatchRule] = {}


class MissingRuleError(autodiff.MissingRuleError):
    """An op with a batched operand has no rule in `BATCH_RULES` (or its rule cannot handle it).
    One error type for every transformation's missing rules (vjp, jvp, vmap)."""


# --- helpers -----------------------------------------------------------------------------------


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def _batched_type(t: RankedTensorType, size: int, axis: int = 0) -> RankedTensorType:
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


def _fail(op: Operation, why: str) -> MissingRuleError:
    return MissingRuleError(f"the {TRANSFORMATION} transformation has no rule for op '{op.name}' {why} "
                            f"(at {op.location})")


def _rule(*names: str) -> Callable[[BatchRule], BatchRule]:
    def register(fn: BatchRule) -> BatchRule:
        for n in names:
            BATCH_RULES[n] = fn
        return fn
    return register


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
    types = [_batched_type(r.type, size) for r in op.results]
    new = b.create(op.name, new_args, types, dict(op.properties), dict(op.attributes))
    return list(new.results), [0] * len(types)


# Every op with the `Elementwise` trait gets `elementwise_rule` from loom.ops.elementwise. A
# bit-exact reinterpretation of one width maps elements one to one too (it has no Elementwise
# trait, since a change of width changes the shape).
elementwise_rule = _elementwise
BATCH_RULES["stablehlo.bitcast_convert"] = _elementwise


@_rule("ad.stop_gradient")
def _stop_gradient_rule(b, op, args, dims):
    """The same op on the batched operand, batch dimension unchanged."""
    return [b.create(op.name, [args[0]], [args[0].type], {}, dict(op.attributes)).results[0]], [dims[0]]


@_rule("ad.custom_vjp", "ad.custom_jvp")
def _custom_derivative_rule(b, op, args, dims):
    """Every operand batched at axis 0 (unbatched ones broadcast), the region batched over the
    same axis; the values the region captures keep their own batching (an unbatched constant
    stays one: a reduce's initial value, say, must not become batched). The op keeps its
    derivative under vmap."""
    size = _LOCAL.states[-1].size
    operands = [bdim_to_front(b, v, d, size) for v, d in zip(args, dims)]
    free, fvals, fdims = _captured(b, op)
    block = op.regions[0].entry
    fn, _ = _vmapped(op.regions[0], free, [0] * len(block.args), fdims, size, 0)
    region = stablehlo._build_region([_batched_type(a.type, size) for a in block.args],
                                     lambda bb, a: _inline(bb, fn, [*a, *fvals]), b.location)
    sizes = op.properties["operandSegmentSizes"].values
    groups, start = [], 0
    for k in sizes:
        groups.append(operands[start:start + k])
        start += k
    new = type(op)._build(b, groups, region, None)
    return list(new.results), [0] * len(new.results)


# --- stacks of saved values (vmap of a gradient through a loop) ------------------------------------



def _stack_root(s: Value) -> Any:
    """What identifies the run-time stack `s`: the captured value a region argument stands for,
    and for a `stack.companion` the companion of its stack's root (one per stack, however many
    companion ops ask for it)."""
    while s in autodiff._LOCAL.origins:
        s = autodiff._LOCAL.origins[s]
    owner = s.owner_op
    if owner is not None and owner.name == "stack.companion":
        return ("companion", _stack_root(owner.operands[0]))
    return s


def _pops_split(op: Operation, mapping: dict) -> bool:
    return any(n.name == "stack.pop" and _stack_root(mapping.get(n.operands[0], n.operands[0])) in _LOCAL.split_stacks
               for n in op.walk() if n is not op)


@_rule("stack.push")
def _stack_push(b, op, args, dims):
    # A stack keeps its element type: a batched value is pushed as its lanes, one by one, and
    # every pop of that stack pops the lanes back and stacks them (so a batched while loop's
    # forward and backward passes, which run the same number of iterations for every lane,
    # stay in step).
    from loom.dialects import stack
    s, v = args
    if dims[1] is None:
        stack.push(b, s, v)
        return [], []
    _LOCAL.split_stacks.add(_stack_root(s))
    v = moveaxis(b, v, dims[1], 0)
    shape = _shape(v)
    for lane in range(shape[0]):
        part = stablehlo.slice_(b, v, [lane] + [0] * (len(shape) - 1), [lane + 1, *shape[1:]])
        stack.push(b, s, stablehlo.reshape(b, part, shape[1:]))
    return [], []


@_rule("stack.pop")
def _stack_pop(b, op, args, dims):
    from loom.dialects import stack
    s = args[0]
    if _stack_root(s) not in _LOCAL.split_stacks:
        return [stack.pop(b, s)], [None]
    size = _LOCAL.states[-1].size
    lanes = [stack.pop(b, s) for _ in range(size)][::-1]
    t = s.type.element_type
    parts = [stablehlo.reshape(b, x, (1, *t.shape)) for x in lanes]
    return [stablehlo.concatenate(b, parts, 0) if size > 1 else parts[0]], [0]


# --- control flow ------------------------------------------------------------------------------


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


def _captured(b: Builder, op: Operation, all_batched: bool = False) -> tuple[list[Value], list[Value],
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


def _vmapped(region: object, free: list[Value], arg_dims: list[int | None], free_dims: list[int | None],
             size: int, out_dims: Sequence[int | None] | int | None) -> tuple[Operation, list[bool]]:
    fn = autodiff.region_function(region, free)
    out = vmap_function(fn, [*arg_dims, *free_dims], size, out_dims)
    return out, list(_LOCAL.batched_outputs)


def _inline(bb: Builder, fn: Operation, values: Sequence[Value]) -> list[Value]:
    block = fn.regions[0].entry
    return autodiff._inline_body(bb, block, dict(zip(block.args, values)))


def _stop_gradient(b: Builder, v: Value) -> Value:
    """`v` through a bit-exact round trip that carries no cotangent (bitcast_convert)."""
    from loom.ir.types import IntegerType
    et = v.type.element_type
    width = int(str(et)[1:]) if str(et)[1:].isdigit() else 32
    as_int = stablehlo.bitcast_convert(b, v, RankedTensorType(v.type.shape, IntegerType(width), None))
    return stablehlo.bitcast_convert(b, as_int, v.type)


def _lanes(b: Builder, pred: Value, like: Value) -> Value:
    """A batch predicate `(size,)` broadcast along axis 0 of `like`."""
    return stablehlo.broadcast_in_dim(b, pred, _shape(like), [0]) if len(_shape(like)) > 1 else pred


@_rule("stablehlo.while")
def _while(b, op, args, dims):
    # As JAX: a fixpoint finds the batched carries; a batched predicate batches every carry, the
    # loop runs while any lane's predicate holds, and finished lanes keep their values (select).
    size = _LOCAL.states[-1].size
    n = len(args)
    free, fvals, fdims = _captured(b, op)
    batched = [d is not None for d in dims]
    while True:
        body_fn, outs = _vmapped(op.regions[1], free, [0 if x else None for x in batched], fdims, size, 0)
        new = [x or o for x, o in zip(batched, outs)]
        cond_fn, pred_b = _vmapped(op.regions[0], free, [0 if x else None for x in new], fdims, size, 0)
        if pred_b[0]:
            new = [True] * n
        if new == batched:
            break
        batched = new
    outer = [n for n in op.walk() if n is not op and n.name in ("stack.push", "stack.pop")
             and not op.is_ancestor(autodiff._definer(n.operands[0]))]
    if pred_b[0] and any(n.name == "stack.push" for n in outer):
        if any(n.name == "stack.pop" for n in outer):
            raise MissingRuleError(f"the {TRANSFORMATION} transformation does not batch a loop that both pushes and "
                                   f"pops values of stacks defined outside it when its trip count differs between "
                                   f"lanes (at {op.location})")
        return _delayed_while(b, op, args, dims, free, fvals, fdims, size)
    body_fn, _ = _vmapped(op.regions[1], free, [0 if x else None for x in batched], fdims, size,
                          [0 if x else None for x in batched])
    cond_fn, _ = _vmapped(op.regions[0], free, [0 if x else None for x in batched], fdims, size,
                          0 if pred_b[0] else None)
    init = [bdim_to_front(b, a, d, size) if x else a for a, d, x in zip(args, dims, batched)]
    types = [v.type for v in init]

    def cond(bb: Builder, carries: list) -> list:
        p = _inline(bb, cond_fn, [*carries, *fvals])[0]
        if pred_b[0]:
            false = stablehlo.constant(bb, np.zeros((), np.bool_), RankedTensorType((), p.type.element_type, None))
            p = stablehlo.reduce(bb, [p], [false], [0], lambda b2, a: [stablehlo.or_(b2, a[0], a[1])])
        return [p]

    def body(bb: Builder, carries: list) -> list:
        out = _inline(bb, body_fn, [*carries, *fvals])
        if not pred_b[0]:
            return out
        p = _inline(bb, cond_fn, [*carries, *fvals])[0]
        return [stablehlo.select(bb, _lanes(bb, p, o), o, c) for o, c in zip(out, carries)]

    regions = [stablehlo._build_region(types, cond, b.location), stablehlo._build_region(types, body, b.location)]
    new_op = b.insert(stablehlo.WhileOp.create(init, regions=regions, location=b.location))
    return list(new_op.results), [0 if x else None for x in batched]


def _delayed_while(b: Builder, op: Operation, args: list, dims: list, free: list, fvals: list, fdims: list,
                   size: int) -> tuple[list[Value], list[int | None]]:
    """A batched loop with per-lane trip counts that saves values on stacks (the forward loop of
    a gradient). The backward loop pops the lanes' values last in, first out, and its lanes with
    fewer iterations finish first; so the forward loop must *start* those lanes late. A first
    loop (without the pushes) counts each lane's iterations n_l; the second runs max(n) iterations
    and lane l is live in the last n_l of them, frozen (select) before."""
    i32 = RankedTensorType((), IntegerType(32), None)
    lanes_i32 = RankedTensorType((size,), IntegerType(32), None)
    n = len(args)
    carry_dims = [0] * n
    init = [bdim_to_front(b, a, d, size) for a, d in zip(args, dims)]
    types = [v.type for v in init]
    cond_fn, _ = _vmapped(op.regions[0], free, carry_dims, fdims, size, 0)
    body_fn, _ = _vmapped(op.regions[1], free, carry_dims, fdims, size, 0)
    plain = autodiff.region_function(op.regions[1], free)
    for inner in list(plain.walk()):
        if inner.name == "stack.push":
            inner.erase()
    count_fn = vmap_function(plain, [*carry_dims, *fdims], size, 0)

    def select_lanes(bb: Builder, p: Value, new: list, old: list) -> list:
        return [stablehlo.select(bb, _lanes(bb, p, x), x, y) for x, y in zip(new, old)]

    zero_lanes = stablehlo.constant(b, np.zeros((size,), np.int32), lanes_i32)
    one_lanes = stablehlo.constant(b, np.ones((size,), np.int32), lanes_i32)
    false = stablehlo.constant(b, np.zeros((), np.bool_), RankedTensorType((), IntegerType(1), None))

    def any_lane(bb: Builder, p: Value) -> Value:
        return stablehlo.reduce(bb, [p], [false], [0], lambda b2, a: [stablehlo.or_(b2, a[0], a[1])])

    def count_cond(bb: Builder, c: list) -> list:
        return [any_lane(bb, _inline(bb, cond_fn, [*c[:n], *fvals])[0])]

    def count_body(bb: Builder, c: list) -> list:
        p = _inline(bb, cond_fn, [*c[:n], *fvals])[0]
        new = select_lanes(bb, p, _inline(bb, count_fn, [*c[:n], *fvals]), c[:n])
        return [*new, stablehlo.add(bb, c[n], stablehlo.select(bb, p, one_lanes, zero_lanes))]
    count_types = [*types, lanes_i32]
    counted = b.insert(stablehlo.WhileOp.create([*init, zero_lanes], regions=[
        stablehlo._build_region(count_types, count_cond, b.location),
        stablehlo._build_region(count_types, count_body, b.location)], location=b.location)).results
    trips = counted[n]
    low = stablehlo.constant(b, np.zeros((), np.int32), i32)
    longest = stablehlo.reduce(b, [trips], [low], [0], lambda b2, a: [stablehlo.maximum(b2, a[0], a[1])])
    starts = stablehlo.subtract(b, stablehlo.broadcast_in_dim(b, longest, (size,), []), trips)
    one = stablehlo.constant(b, np.ones((), np.int32), i32)

    def cond(bb: Builder, c: list) -> list:
        return [stablehlo.compare(bb, c[0], longest, "LT")]

    def body(bb: Builder, c: list) -> list:
        live = stablehlo.compare(bb, stablehlo.broadcast_in_dim(bb, c[0], (size,), []), starts, "GE")
        new = select_lanes(bb, live, _inline(bb, body_fn, [*c[1:], *fvals]), c[1:])
        return [stablehlo.add(bb, c[0], one), *new]
    main_types = [i32, *types]
    out = b.insert(stablehlo.WhileOp.create([low, *init], regions=[
        stablehlo._build_region(main_types, cond, b.location),
        stablehlo._build_region(main_types, body, b.location)], location=b.location)).results
    return list(out[1:]), [0] * n


@_rule("stablehlo.if", "stablehlo.case")
def _branches(b, op, args, dims):
    # An unbatched selector keeps the op (branches batched); a batched one runs every branch and
    # selects per lane, each branch's inputs masked so that the lanes it does not own carry no
    # cotangent back (no NaN or inf from an unselected branch reaches a gradient).
    size = _LOCAL.states[-1].size
    sel, sd = args[0], dims[0]
    free, fvals, fdims = _captured(b, op, all_batched=sd is not None)
    fns = [_vmapped(r, free, [], fdims, size, 0)[0] for r in op.regions]
    if sd is None:
        regions = [stablehlo._build_region([], lambda bb, _a, fn=fn: _inline(bb, fn, fvals), b.location) for fn in fns]
        types = [_batched_type(t, size) for t in op.result_types]
        new_op = b.insert(type(op).create([sel], result_types=types, regions=regions, location=b.location))
        return list(new_op.results), [0] * len(types)
    sel = moveaxis(b, sel, sd, 0)
    k = len(fns)
    if op.name == "stablehlo.if":
        preds = [sel, stablehlo.not_(b, sel)]
    else:
        i32 = sel.type
        last = stablehlo.constant(b, np.full((size,), k - 1, np.int32), i32)
        zero = stablehlo.constant(b, np.zeros((size,), np.int32), i32)
        bound = stablehlo.constant(b, np.full((size,), k, np.int32), i32)
        outside = stablehlo.or_(b, stablehlo.compare(b, sel, zero, "LT"), stablehlo.compare(b, sel, bound, "GE"))
        sel = stablehlo.select(b, outside, last, sel)
        preds = [stablehlo.compare(b, sel, stablehlo.constant(b, np.full((size,), j, np.int32), i32), "EQ")
                 for j in range(k)]
    outs = []
    for fn, p in zip(fns, preds):
        masked = [stablehlo.select(b, _lanes(b, p, v), v, _stop_gradient(b, v)) if autodiff.is_float(v.type) else v
                  for v in fvals]
        outs.append(_inline(b, fn, masked))
    results = outs[-1]
    for j in range(k - 2, -1, -1):
        results = [stablehlo.select(b, _lanes(b, preds[j], x), x, y) for x, y in zip(outs[j], results)]
    return results, [0] * len(results)


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
    inputs = [t if d is None else _batched_type(t, axis_size, d) for t, d in zip(ftype.inputs, in_dims)]
    results = [t if d is None else _batched_type(t, axis_size, d) for t, d in zip(ftype.results, out_dims)]
    new_type = FunctionType(tuple(inputs), tuple(results))
    new = func.FuncOp.build(name, new_type, location=fn.location)
    block = new.regions[0].entry
    old_block = fn.regions[0].entry
    mapping: dict = dict(zip(old_block.args, block.args))
    bdims: dict[Value, int] = {a: d for a, d in zip(block.args, in_dims) if d is not None}
    b = Builder(InsertionPoint.at_end(block))
    ret = None
    origins = autodiff._LOCAL.origins  # a region's arguments -> the captured values (stacks of saved values)
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
            if old.name == "stack.pop" and _stack_root(args[0]) in _LOCAL.split_stacks:
                captured = True
            if all(d is None for d in ds) and not captured:
                new_op = b.insert(old.clone(mapping))
                if old.name == "stack.new":
                    origins[new_op.results[0]] = old.results[0]
                continue
            rule = BATCH_RULES.get(old.name)
            if rule is None:
                raise MissingRuleError(f"the {TRANSFORMATION} transformation has no rule for op '{old.name}' "
                                       f"(at {old.location}); add one to its op family in loom.ops")
            b.location = old.location
            outs, out_ds = rule(b, old, args, ds)
            for r, v, d in zip(old.results, outs, out_ds):
                mapping[r] = v
                if d is not None:
                    bdims[v] = d
    finally:
        _LOCAL.states.pop()
        if not _LOCAL.states and not autodiff._LOCAL.states:
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


__all__ = ["BATCH_RULES", "TRANSFORMATION", "BatchRule", "MissingRuleError", "bdim_to_front",
           "elementwise_rule", "moveaxis", "vmap_function", "vmap_module"]
