"""VJP, JVP and batching rules for gather, scatter, dynamic slicing, convolution and sort, and the
rules `loom.numpy` needs that the core tables lack (clamp, remainder and atan2 tangents, products,
cumulative products, bitcasts), registered into the transformations' own tables
(`VJP_RULES`, `JVP_RULES`, `BATCH_RULES`) with their rule signatures.

- gather: its cotangent is a scatter-add of the cotangent into zeros (the start indices clamped
  first, as gather clamps them); its tangent is the same gather of the tangent; batched, the new
  dimension becomes an offset dimension (batched operand), a leading batch dimension of the
  indices (batched indices), or an operand / indices batching dimension pair (both).
- scatter (update computations that overwrite, add, take the maximum / minimum, or multiply
  with constant updates or unique indices): add passes the cotangent to the operand and gathers
  it for the updates (dropped out-of-bounds windows get none); overwrite masks them by which
  update won, found by scattering ids; maximum / minimum share it evenly among the operand and
  the updates equal to the result (as JAX). Batched with the batching dimensions of the spec.
- dynamic_slice / dynamic_update_slice: each other's transposes; batched start indices turn them
  into a gather / scatter with batching dimensions.
- convolution: JAX's transposes (a convolution of the cotangent with the reversed kernel, and of
  the input with the cotangent), feature and batch groups included; batched by folding the batch
  into the batch, feature or kernel-output dimension, as JAX.
- sort: batched by sorting one dimension further; its tangent follows the sorting permutation.
- reduce_window with a maximum / minimum body (pooling, cummax): the cotangent of each window
  goes to its first extremum (`stablehlo.select_and_scatter`, as JAX); the tangent is carried
  along by a two-input reduce_window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import ConvDimensionNumbers, GatherDimensionNumbers, ScatterDimensionNumbers
from loom.ir.attributes import numpy_dtype
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, full, is_float, reduce_sum
from loom.transforms.autodiff import props_ints as _ints
from loom.transforms.batching import BATCH_RULES, bdim_to_front, moveaxis
from loom.transforms.forward_ad import JVP_RULES

I32 = IntegerType(32)


# --- helpers -----------------------------------------------------------------------------------


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def _int(op: Operation, name: str, default: int) -> int:
    attr = op.properties.get(name)
    return default if attr is None else int(attr.value)


def _zeros(b: Builder, like: Value) -> Value:
    return full(b, 0, like.type)


def _scalar(b: Builder, value: float, et) -> Value:
    return full(b, value, RankedTensorType((), et, None))


def _fail(transformation: str, op: Operation, why: str) -> MissingRuleError:
    return MissingRuleError(f"the {transformation} transformation has no rule for op '{op.name}' {why} "
                            f"(at {op.location})")


def _with_regions(b: Builder, op: Operation, operands: Sequence[Value], types: Sequence, props: dict) -> Operation:
    """A copy of `op` (its regions cloned) on new operands, result types and properties."""
    new = Operation.create(op.name, list(operands), list(types), props, dict(op.attributes), (), (), b.location)
    for region in op.regions:
        new.add_region(region.clone({}))
    return b.insert(new)


def _batched_type(t: RankedTensorType, size: int) -> RankedTensorType:
    return RankedTensorType((size, *t.shape), t.element_type, None)


def _rule(table: dict, *names: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for n in names:
            table[n] = fn
        return fn
    return register


def _index_vector_components(indices: Value, index_vector_dim: int) -> int:
    shape = _shape(indices)
    return 1 if index_vector_dim == len(shape) else shape[index_vector_dim]


def _per_component(indices: Value, index_vector_dim: int, values: Sequence[int]) -> np.ndarray:
    """An array of the indices' shape holding `values[k]` at index vector component k."""
    shape = _shape(indices)
    dtype = numpy_dtype(indices.type.element_type)
    if index_vector_dim == len(shape):
        return np.full(shape, values[0] if values else 0, dtype)
    vec_shape = [1] * len(shape)
    vec_shape[index_vector_dim] = len(values)
    return np.broadcast_to(np.asarray(values, dtype).reshape(vec_shape), shape)


def _clamp_starts(b: Builder, indices: Value, index_map: Sequence[int], index_vector_dim: int,
                  operand_shape: Sequence[int], sizes: Sequence[int]) -> Value:
    """The start indices clamped into `[0, operand - window]`, as gather and dynamic_slice do."""
    hi = _per_component(indices, index_vector_dim, [operand_shape[d] - sizes[d] for d in index_map])
    lo = np.zeros_like(hi)
    return stablehlo.clamp(b, stablehlo.constant(b, np.ascontiguousarray(lo), indices.type), indices,
                           stablehlo.constant(b, np.ascontiguousarray(hi), indices.type))


def _in_bounds(b: Builder, indices: Value, index_map: Sequence[int], index_vector_dim: int,
               operand_shape: Sequence[int], sizes: Sequence[int]) -> Value:
    """A bool tensor over the indices' batch dimensions: whether each window lies in bounds (the
    windows scatter applies; the others are dropped)."""
    hi = _per_component(indices, index_vector_dim, [operand_shape[d] - sizes[d] for d in index_map])
    hi_v = stablehlo.constant(b, np.ascontiguousarray(hi), indices.type)
    ok = stablehlo.and_(b, stablehlo.compare(b, indices, _zeros(b, indices), "GE"),
                        stablehlo.compare(b, indices, hi_v, "LE"))
    rank = len(_shape(indices))
    if index_vector_dim == rank:
        return ok
    true = stablehlo.constant(b, np.asarray(True), RankedTensorType((), IntegerType(1), None))
    return stablehlo.reduce(b, [ok], [true], [index_vector_dim],
                            lambda bb, args: [stablehlo.and_(bb, args[0], args[1])])


# --- gather ------------------------------------------------------------------------------------


def _gather_props(op: Operation) -> tuple[GatherDimensionNumbers, list[int]]:
    return op.properties["dimension_numbers"], _ints(op, "slice_sizes")


def _scatter_of_gather(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers.get(
        update_window_dims=tuple(dn.offset_dims), inserted_window_dims=tuple(dn.collapsed_slice_dims),
        input_batching_dims=tuple(dn.operand_batching_dims),
        scatter_indices_batching_dims=tuple(dn.start_indices_batching_dims),
        scatter_dims_to_operand_dims=tuple(dn.start_index_map), index_vector_dim=dn.index_vector_dim)


def _gather_of_scatter(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers.get(
        offset_dims=tuple(dn.update_window_dims), collapsed_slice_dims=tuple(dn.inserted_window_dims),
        operand_batching_dims=tuple(dn.input_batching_dims),
        start_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
        start_index_map=tuple(dn.scatter_dims_to_operand_dims), index_vector_dim=dn.index_vector_dim)


def _add_body(bb: Builder, args: list[Value]) -> list[Value]:
    return [stablehlo.add(bb, args[0], args[1])]


def _set_body(bb: Builder, args: list[Value]) -> list[Value]:
    return [args[1]]


@_rule(VJP_RULES, "stablehlo.gather")
def _gather_vjp(b, op, cts):
    x, indices = op.operands
    if not is_float(x.type) or cts[0] is None:
        return [None, None]
    dn, sizes = _gather_props(op)
    clamped = _clamp_starts(b, indices, dn.start_index_map, dn.index_vector_dim, _shape(x), sizes)
    gx = stablehlo.scatter(b, [_zeros(b, x)], clamped, [cts[0]], _scatter_of_gather(dn), _add_body)
    return [gx, None]


@_rule(JVP_RULES, "stablehlo.gather")
def _gather_jvp(b, op, xs, ts):
    if ts[0] is None:
        return [None]
    return list(b.insert(op.clone({xs[0]: ts[0]})).results)


def _shift(dims: Sequence[int], by: int = 1) -> tuple[int, ...]:
    return tuple(d + by for d in dims)


@_rule(BATCH_RULES, "stablehlo.gather")
def _gather_batch(b, op, args, dims):
    x, indices = args
    dx, di = dims
    dn, sizes = _gather_props(op)
    if di is None:  # the batch becomes a leading offset dimension of a full-size window
        x = moveaxis(b, x, dx, 0)
        new = GatherDimensionNumbers.get(
            offset_dims=(0, *_shift(dn.offset_dims)), collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=tuple(dn.start_indices_batching_dims),
            start_index_map=_shift(dn.start_index_map), index_vector_dim=dn.index_vector_dim)
        v = stablehlo.gather(b, x, indices, new, [_shape(x)[0], *sizes])
        return [v], [0]
    indices = moveaxis(b, indices, di, 0)
    if dx is None:  # a leading batch dimension of the indices: the first non-offset result dimension
        new = GatherDimensionNumbers.get(
            offset_dims=_shift(dn.offset_dims), collapsed_slice_dims=tuple(dn.collapsed_slice_dims),
            operand_batching_dims=tuple(dn.operand_batching_dims),
            start_indices_batching_dims=_shift(dn.start_indices_batching_dims),
            start_index_map=tuple(dn.start_index_map), index_vector_dim=dn.index_vector_dim + 1)
        return [stablehlo.gather(b, x, indices, new, sizes)], [0]
    x = moveaxis(b, x, dx, 0)
    new = GatherDimensionNumbers.get(
        offset_dims=_shift(dn.offset_dims), collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *_shift(dn.start_indices_batching_dims)),
        start_index_map=_shift(dn.start_index_map), index_vector_dim=dn.index_vector_dim + 1)
    return [stablehlo.gather(b, x, indices, new, [1, *sizes])], [0]


# --- scatter -----------------------------------------------------------------------------------


def _scatter_kind(op: Operation) -> str | None:
    """'set', 'add', 'multiply', 'maximum' or 'minimum' for a one-input scatter whose update
    computation is that, else None."""
    if len(op.results) != 1:
        return None
    block = op.regions[0].entry
    ops = list(block.ops)
    current, update = block.args
    if len(ops) == 1 and tuple(ops[0].operands) == (update,):
        return "set"
    if len(ops) == 2 and len(ops[0].operands) == 2 and set(ops[0].operands) == {current, update} \
            and tuple(ops[1].operands) == (ops[0].results[0],):
        name = ops[0].name.removeprefix("stablehlo.")
        if name in ("add", "multiply", "maximum", "minimum", "and", "or"):
            return name
    return None


def _scatter_window_sizes(op: Operation) -> list[int]:
    """The window size per operand dimension (1 for inserted and batching dimensions)."""
    x, _, u = op.operands
    dn = op.properties["scatter_dimension_numbers"]
    rank = len(_shape(x))
    window_dims = [d for d in range(rank) if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
    sizes = [1] * rank
    for d, ud in zip(window_dims, dn.update_window_dims):
        sizes[d] = _shape(u)[ud]
    return sizes


def _to_updates(b: Builder, v: Value, op: Operation) -> Value:
    """A value over the indices' batch dimensions broadcast to the updates' shape."""
    u = op.operands[2]
    dn = op.properties["scatter_dimension_numbers"]
    scatter_dims = [d for d in range(len(_shape(u))) if d not in dn.update_window_dims]
    return stablehlo.broadcast_in_dim(b, v, _shape(u), scatter_dims)


def _unique(op: Operation) -> bool:
    attr = op.properties.get("unique_indices")
    return attr is not None and bool(attr.value)


def _constant_defined(v: Value) -> bool:
    owner = v.owner_op
    return owner is not None and owner.name == "stablehlo.constant"


@_rule(VJP_RULES, "stablehlo.scatter")
def _scatter_vjp(b, op, cts):
    kind = _scatter_kind(op)
    g = cts[0]
    if len(op.results) != 1 or g is None:
        return [None] * len(op.operands)
    x, indices, u = op.operands
    dn = op.properties["scatter_dimension_numbers"]
    sizes = _scatter_window_sizes(op)
    gdn = _gather_of_scatter(dn)
    valid = _to_updates(b, _in_bounds(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim,
                                      _shape(x), sizes), op)
    clamped = _clamp_starts(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim, _shape(x), sizes)

    def gather_at(v: Value) -> Value:
        return stablehlo.gather(b, v, clamped, gdn, sizes)

    def masked(mask: Value, v: Value) -> Value:
        return stablehlo.select(b, mask, v, _zeros(b, v))

    if kind == "add":
        return [g, None, masked(valid, gather_at(g))]
    if kind == "set":
        # which update won each position: scatter ids, read them back (as JAX's scatter JVP)
        scatter_shape = [n for d, n in enumerate(_shape(u)) if d not in dn.update_window_dims]
        count = int(np.prod(scatter_shape, dtype=np.int64))
        ids = stablehlo.iota(b, RankedTensorType((max(count, 1),), I32, None), 0)
        ids = stablehlo.add(b, ids, full(b, 1, ids.type))
        if count == 0:
            ids = stablehlo.slice_(b, ids, [0], [0], [1])
        ids = _to_updates(b, stablehlo.reshape(b, ids, scatter_shape), op)
        zeros_i = full(b, 0, RankedTensorType(_shape(x), I32, None))
        written = stablehlo.scatter(b, [zeros_i], indices, [ids], dn, _set_body)
        untouched = stablehlo.compare(b, written, zeros_i, "EQ")
        won = stablehlo.and_(b, valid, stablehlo.compare(b, gather_at(written), ids, "EQ"))
        return [masked(untouched, g), None, masked(won, gather_at(g))]
    if kind in ("maximum", "minimum") and is_float(x.type):
        # as JAX: the cotangent is shared evenly among the operand and the updates equal to the result
        out = op.results[0]
        won = stablehlo.and_(b, valid, stablehlo.compare(b, u, gather_at(out), "EQ"))
        share_u = stablehlo.convert(b, won, u.type.element_type)
        kept = stablehlo.convert(b, stablehlo.compare(b, x, out, "EQ"), x.type.element_type)
        count = stablehlo.add(b, kept, stablehlo.scatter(b, [_zeros(b, x)], indices, [share_u], dn, _add_body))
        per = stablehlo.divide(b, g, count)
        return [stablehlo.multiply(b, per, kept), None, stablehlo.multiply(b, share_u, gather_at(per))]
    if kind == "multiply" and (_constant_defined(u) or _unique(op)):
        ones = full(b, 1, x.type)
        sorted_attr = op.properties.get("indices_are_sorted")
        factor = stablehlo.scatter(b, [ones], indices, [u], dn,
                                   lambda bb, args: [stablehlo.multiply(bb, args[0], args[1])],
                                   sorted_attr is not None and bool(sorted_attr.value), _unique(op))
        # with unique indices each output element is x * u for one update u
        gu = None if _constant_defined(u) else masked(valid, gather_at(stablehlo.multiply(b, g, x)))
        return [stablehlo.multiply(b, g, factor), None, gu]
    raise _fail("vjp", op, f"with update computation {kind or '(not a single set/add/multiply)'}"
                + (" of non-constant updates without unique_indices" if kind == "multiply" else ""))


@_rule(JVP_RULES, "stablehlo.scatter")
def _scatter_jvp(b, op, xs, ts):
    kind = _scatter_kind(op)
    x, _, u = xs
    tx, tu = ts[0], ts[2]
    if kind in ("set", "add"):  # linear: the same scatter of the tangents
        return list(b.insert(op.clone({x: tx if tx is not None else _zeros(b, x),
                                       u: tu if tu is not None else _zeros(b, u)})).results)
    if kind in ("maximum", "minimum") and is_float(x.type):
        # as JAX: the mean of the tangents of the operand and the updates equal to the result
        dn = op.properties["scatter_dimension_numbers"]
        indices = xs[1]
        out = op.results[0]
        sizes = _scatter_window_sizes(op)
        clamped = _clamp_starts(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim, _shape(x), sizes)
        valid = _to_updates(b, _in_bounds(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim,
                                          _shape(x), sizes), op)
        gathered = stablehlo.gather(b, out, clamped, _gather_of_scatter(dn), sizes)
        share_u = stablehlo.convert(b, stablehlo.and_(b, valid, stablehlo.compare(b, u, gathered, "EQ")),
                                    u.type.element_type)
        kept = stablehlo.convert(b, stablehlo.compare(b, x, out, "EQ"), x.type.element_type)
        count = stablehlo.add(b, kept, stablehlo.scatter(b, [_zeros(b, x)], indices, [share_u], dn, _add_body))
        total = stablehlo.multiply(b, kept, tx) if tx is not None else _zeros(b, x)
        if tu is not None:
            total = stablehlo.add(b, total, stablehlo.scatter(b, [_zeros(b, x)], indices,
                                                              [stablehlo.multiply(b, share_u, tu)], dn, _add_body))
        return [stablehlo.divide(b, total, count)]
    if kind == "multiply" and (tu is None or _unique(op)):
        out = None if tx is None else b.insert(op.clone({x: tx})).results[0]  # linear in the operand
        if tu is not None:  # unique indices: x * (the update's tangent where written, else 0)
            spread = stablehlo.scatter(b, [_zeros(b, x)], xs[1], [tu], op.properties["scatter_dimension_numbers"],
                                       _add_body)
            t = stablehlo.multiply(b, x, spread)
            out = t if out is None else stablehlo.add(b, out, t)
        return [out]
    raise _fail("jvp", op, f"with update computation {kind or '(not a single set/add/multiply)'}"
                + (" and a tangent of the updates (without unique_indices)" if kind == "multiply" else ""))


@_rule(BATCH_RULES, "stablehlo.scatter")
def _scatter_batch(b, op, args, dims):
    n = (len(args) - 1) // 2
    dn = op.properties["scatter_dimension_numbers"]
    size = next(_shape(v)[d] for v, d in zip(args, dims) if d is not None)
    inputs = [bdim_to_front(b, v, d, size) for v, d in zip(args[:n], dims[:n])]
    updates = [bdim_to_front(b, v, d, size) for v, d in zip(args[n + 1:], dims[n + 1:])]
    indices, di = args[n], dims[n]
    if di is None:  # the batch is a leading window dimension of the inputs and the updates
        new = ScatterDimensionNumbers.get(
            update_window_dims=(0, *_shift(dn.update_window_dims)),
            inserted_window_dims=_shift(dn.inserted_window_dims), input_batching_dims=_shift(dn.input_batching_dims),
            scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            index_vector_dim=dn.index_vector_dim)
    else:
        indices = moveaxis(b, indices, di, 0)
        new = ScatterDimensionNumbers.get(
            update_window_dims=_shift(dn.update_window_dims), inserted_window_dims=_shift(dn.inserted_window_dims),
            input_batching_dims=(0, *_shift(dn.input_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            index_vector_dim=dn.index_vector_dim + 1)
    props = dict(op.properties)
    props["scatter_dimension_numbers"] = new
    types = [_batched_type(r.type, size) for r in op.results]
    res = _with_regions(b, op, [*inputs, indices, *updates], types, props)
    return list(res.results), [0] * len(types)


# --- dynamic_slice and dynamic_update_slice ----------------------------------------------------


@_rule(VJP_RULES, "stablehlo.dynamic_slice")
def _dynamic_slice_vjp(b, op, cts):
    x, starts = op.operands[0], list(op.operands[1:])
    if cts[0] is None or not is_float(x.type):
        return [None] * len(op.operands)
    return [stablehlo.dynamic_update_slice(b, _zeros(b, x), cts[0], starts), *([None] * len(starts))]


@_rule(JVP_RULES, "stablehlo.dynamic_slice")
def _dynamic_slice_jvp(b, op, xs, ts):
    if ts[0] is None:
        return [None]
    return [stablehlo.dynamic_slice(b, ts[0], list(xs[1:]), _ints(op, "slice_sizes"))]


@_rule(VJP_RULES, "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_vjp(b, op, cts):
    x, u, starts = op.operands[0], op.operands[1], list(op.operands[2:])
    g = cts[0]
    if g is None:
        return [None] * len(op.operands)
    gx = stablehlo.dynamic_update_slice(b, g, _zeros(b, u), starts) if is_float(x.type) else None
    gu = stablehlo.dynamic_slice(b, g, starts, _shape(u)) if is_float(u.type) else None
    return [gx, gu, *([None] * len(starts))]


@_rule(JVP_RULES, "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_jvp(b, op, xs, ts):
    x, u = xs[0], xs[1]
    if ts[0] is None and ts[1] is None:
        return [None]
    tx = ts[0] if ts[0] is not None else _zeros(b, x)
    tu = ts[1] if ts[1] is not None else _zeros(b, u)
    return [stablehlo.dynamic_update_slice(b, tx, tu, list(xs[2:]))]


def _stacked_starts(b: Builder, starts: Sequence[Value], dims: Sequence[int | None], size: int,
                    clamp_to: Sequence[int] | None = None) -> Value:
    """The start indices as one `(size, n)` tensor (batched ones along axis 0), clamped into
    `[0, clamp_to[k]]` when given."""
    et = starts[0].type.element_type
    columns = []
    for k, (s, d) in enumerate(zip(starts, dims)):
        col = stablehlo.broadcast_in_dim(b, s, (size,), []) if d is None else s
        if clamp_to is not None:
            col = stablehlo.clamp(b, _scalar(b, 0, et), col, _scalar(b, clamp_to[k], et))
        columns.append(stablehlo.reshape(b, col, (size, 1)))
    return columns[0] if len(columns) == 1 else stablehlo.concatenate(b, columns, 1)


@_rule(BATCH_RULES, "stablehlo.dynamic_slice")
def _dynamic_slice_batch(b, op, args, dims):
    x, starts = args[0], list(args[1:])
    sizes = _ints(op, "slice_sizes")
    size = next(_shape(v)[d] for v, d in zip(args, dims) if d is not None)
    x = bdim_to_front(b, x, dims[0], size)
    if all(d is None for d in dims[1:]):  # shared starts: one more dimension sliced whole
        zero = _scalar(b, 0, starts[0].type.element_type) if starts else None
        return [stablehlo.dynamic_slice(b, x, [zero, *starts], [size, *sizes])], [0]
    rank = len(sizes)
    if rank == 0:
        return [x], [0]
    indices = _stacked_starts(b, starts, dims[1:], size)
    dn = GatherDimensionNumbers.get(offset_dims=tuple(range(1, rank + 1)), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,), start_index_map=tuple(range(1, rank + 1)),
                                    index_vector_dim=1)
    return [stablehlo.gather(b, x, indices, dn, [1, *sizes])], [0]


@_rule(BATCH_RULES, "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_batch(b, op, args, dims):
    x, u, starts = args[0], args[1], list(args[2:])
    size = next(_shape(v)[d] for v, d in zip(args, dims) if d is not None)
    x = bdim_to_front(b, x, dims[0], size)
    u = bdim_to_front(b, u, dims[1], size)
    if all(d is None for d in dims[2:]):
        zero = _scalar(b, 0, starts[0].type.element_type) if starts else None
        return [stablehlo.dynamic_update_slice(b, x, u, [zero, *starts])], [0]
    rank = len(starts)
    # scatter drops windows out of bounds where dynamic_update_slice clamps: clamp first
    limits = [xs - us for xs, us in zip(_shape(x)[1:], _shape(u)[1:])]
    indices = _stacked_starts(b, starts, dims[2:], size, limits)
    dn = ScatterDimensionNumbers.get(update_window_dims=tuple(range(1, rank + 1)), input_batching_dims=(0,),
                                     scatter_indices_batching_dims=(0,),
                                     scatter_dims_to_operand_dims=tuple(range(1, rank + 1)), index_vector_dim=1)
    return [stablehlo.scatter(b, [x], indices, [u], dn, _set_body)], [0]


# --- convolution -------------------------------------------------------------------------------


class _Conv:
    """A convolution's attributes in JAX's terms: specs `(batch, feature, *spatial)` of the input
    and output, `(out_feature, in_feature, *spatial)` of the kernel."""

    def __init__(self, op: Operation) -> None:
        dn: ConvDimensionNumbers = op.properties["dimension_numbers"]
        self.lhs_spec = (dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions)
        self.rhs_spec = (dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                         *dn.kernel_spatial_dimensions)
        self.out_spec = (dn.output_batch_dimension, dn.output_feature_dimension, *dn.output_spatial_dimensions)
        n = len(dn.input_spatial_dimensions)
        self.strides = _ints(op, "window_strides") or [1] * n
        self.lhs_dilation = _ints(op, "lhs_dilation") or [1] * n
        self.rhs_dilation = _ints(op, "rhs_dilation") or [1] * n
        attr = op.properties.get("padding")
        flat = [0] * (2 * n) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
        self.padding = [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]
        self.feature_group_count = _int(op, "feature_group_count", 1)
        self.batch_group_count = _int(op, "batch_group_count", 1)
        self.precision = op.properties.get("precision_config")
        self.result_element = op.results[0].type.element_type
        reversal = op.properties.get("window_reversal")
        if reversal is not None and any(bool(v) for v in np.asarray(reversal.to_numpy()).reshape(-1)):
            raise MissingRuleError(f"the rules of stablehlo.convolution do not handle window_reversal "
                                   f"(at {op.location})")


def _dimension_numbers(lhs_spec: Sequence[int], rhs_spec: Sequence[int], out_spec: Sequence[int]
                       ) -> ConvDimensionNumbers:
    return ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=tuple(lhs_spec[2:]), kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1], kernel_spatial_dimensions=tuple(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=tuple(out_spec[2:]))


def _conv(b: Builder, c: _Conv, lhs: Value, rhs: Value, specs: tuple, strides: Sequence[int],
          padding: Sequence[tuple[int, int]], lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
          feature_group_count: int, batch_group_count: int) -> Value:
    op = stablehlo.ConvolutionOp.build(b, lhs, rhs, _dimension_numbers(*specs), window_strides=list(strides),
                                       padding=[(int(lo), int(hi)) for lo, hi in padding],
                                       lhs_dilation=list(lhs_dilation), rhs_dilation=list(rhs_dilation),
                                       feature_group_count=feature_group_count,
                                       batch_group_count=batch_group_count)
    if c.precision is not None:
        op.properties["precision_config"] = c.precision
    v = op.results[0]
    return v if v.type.element_type == lhs.type.element_type else stablehlo.convert(b, v, lhs.type.element_type)


def _reshape_axis_out_of(b: Builder, src: int, size1: int, v: Value) -> Value:
    shape = list(_shape(v))
    shape[src:src + 1] = [size1, shape[src] // size1]
    return stablehlo.reshape(b, v, shape)


def _reshape_axis_into(b: Builder, src: int, dst: int, v: Value) -> Value:
    """Merge axis `src` into axis `dst` (numbered without `src`) as its major part."""
    shape = _shape(v)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [shape[i] for i in range(len(shape)) if i != src]
    new_shape[dst] *= shape[src]
    if perm != list(range(len(shape))):
        v = stablehlo.transpose(b, v, perm)
    return stablehlo.reshape(b, v, new_shape)


def _dilate(shape: Sequence[int], dilation: Sequence[int]) -> np.ndarray:
    return np.asarray([0 if s == 0 else 1 + d * (s - 1) for s, d in zip(shape, dilation)])


def _transpose_spec(spec: Sequence[int]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _conv_transpose_lhs(b: Builder, c: _Conv, g: Value, lhs: Value, rhs: Value) -> Value:
    lhs_sdims, rhs_sdims, out_sdims = c.lhs_spec[2:], c.rhs_spec[2:], c.out_spec[2:]
    fgc, bgc = c.feature_group_count, c.batch_group_count
    if fgc > 1:
        rhs = _reshape_axis_out_of(b, c.rhs_spec[0], fgc, rhs)
        rhs = _reshape_axis_into(b, c.rhs_spec[0], c.rhs_spec[1], rhs)
    elif bgc > 1:
        rhs = _reshape_axis_out_of(b, c.rhs_spec[0], bgc, rhs)
        rhs = _reshape_axis_into(b, c.rhs_spec[0], c.rhs_spec[1], rhs)
        fgc = bgc
    in_shape = [_shape(lhs)[d] for d in lhs_sdims]
    window = [_shape(rhs)[d] for d in rhs_sdims]
    out_shape = [_shape(g)[d] for d in out_sdims]
    lhs_dilated = _dilate(in_shape, c.lhs_dilation)
    rhs_dilated = _dilate(window, c.rhs_dilation)
    out_dilated = _dilate(out_shape, c.strides)
    before = rhs_dilated - np.asarray([lo for lo, _ in c.padding]) - 1
    after = lhs_dilated + rhs_dilated - 1 - out_dilated - before
    reversed_rhs = stablehlo.reverse(b, rhs, list(rhs_sdims)) if rhs_sdims else rhs
    out = _conv(b, c, g, reversed_rhs, (c.out_spec, _transpose_spec(c.rhs_spec), c.lhs_spec), c.lhs_dilation,
                list(zip(before.tolist(), after.tolist())), c.strides, c.rhs_dilation, fgc, 1)
    if c.batch_group_count > 1:
        out = _reshape_axis_out_of(b, c.lhs_spec[1], c.batch_group_count, out)
        out = _reshape_axis_into(b, c.lhs_spec[1], c.lhs_spec[0], out)
    return out


def _conv_transpose_rhs(b: Builder, c: _Conv, g: Value, lhs: Value, rhs: Value) -> Value:
    lhs_sdims, rhs_sdims, out_sdims = c.lhs_spec[2:], c.rhs_spec[2:], c.out_spec[2:]
    fgc, bgc = c.feature_group_count, c.batch_group_count
    if bgc > 1:
        fgc, bgc = bgc, 1
    elif fgc > 1:
        fgc, bgc = 1, fgc
    in_shape = [_shape(lhs)[d] for d in lhs_sdims]
    window = [_shape(rhs)[d] for d in rhs_sdims]
    out_shape = [_shape(g)[d] for d in out_sdims]
    lhs_dilated = _dilate(in_shape, c.lhs_dilation)
    rhs_dilated = _dilate(window, c.rhs_dilation)
    out_dilated = _dilate(out_shape, c.strides)
    lo = np.asarray([p for p, _ in c.padding], dtype=np.int64)
    hi = (out_dilated - lhs_dilated) + (rhs_dilated - lo - 1)
    specs = (_transpose_spec(c.lhs_spec), _transpose_spec(c.out_spec), _transpose_spec(c.rhs_spec))
    return _conv(b, c, lhs, g, specs, c.rhs_dilation, list(zip(lo.tolist(), hi.tolist())), c.lhs_dilation,
                 c.strides, fgc, bgc)


@_rule(VJP_RULES, "stablehlo.convolution")
def _convolution_vjp(b, op, cts):
    lhs, rhs = op.operands
    g = cts[0]
    if g is None:
        return [None, None]
    c = _Conv(op)
    if 0 in _shape(g):
        return [_zeros(b, lhs) if is_float(lhs.type) else None, _zeros(b, rhs) if is_float(rhs.type) else None]
    gl = _conv_transpose_lhs(b, c, g, lhs, rhs) if is_float(lhs.type) else None
    gr = _conv_transpose_rhs(b, c, g, lhs, rhs) if is_float(rhs.type) else None
    return [gl, gr]


@_rule(JVP_RULES, "stablehlo.convolution")
def _convolution_jvp(b, op, xs, ts):
    lhs, rhs = xs
    out = None
    if ts[0] is not None:
        out = b.insert(op.clone({lhs: ts[0]})).results[0]
    if ts[1] is not None:
        t = b.insert(op.clone({rhs: ts[1]})).results[0]
        out = t if out is None else stablehlo.add(b, out, t)
    return [out]


@_rule(BATCH_RULES, "stablehlo.convolution")
def _convolution_batch(b, op, args, dims):
    lhs, rhs = args
    dl, dr = dims
    c = _Conv(op)
    ls, rs, os_ = c.lhs_spec, c.rhs_spec, c.out_spec
    fgc, bgc = c.feature_group_count, c.batch_group_count

    def conv(new_lhs: Value, new_rhs: Value, f: int, g: int) -> Value:
        out = _conv(b, c, new_lhs, new_rhs, (ls, rs, os_), c.strides, c.padding, c.lhs_dilation, c.rhs_dilation,
                    f, g)
        et = op.results[0].type.element_type
        return out if out.type.element_type == et else stablehlo.convert(b, out, et)

    if dl is not None and dr is not None:
        size = _shape(lhs)[dl]
        if bgc > 1:
            new_lhs = _reshape_axis_into(b, dl, ls[0], lhs)
            bgc *= size
        else:
            new_lhs = _reshape_axis_into(b, dl, ls[1], lhs)
            fgc *= size
        new_rhs = _reshape_axis_into(b, dr, rs[0], rhs)
        out = conv(new_lhs, new_rhs, fgc, bgc)
        return [_reshape_axis_out_of(b, os_[1], size, out)], [os_[1]]
    if dl is not None:
        size = _shape(lhs)[dl]
        if bgc == 1:
            out = conv(_reshape_axis_into(b, dl, ls[0], lhs), rhs, fgc, bgc)
        else:
            new_lhs = _reshape_axis_out_of(b, ls[0] + int(dl <= ls[0]), bgc, lhs)
            new_lhs = _reshape_axis_into(b, dl + int(ls[0] < dl), ls[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(b, ls[0], ls[0], new_lhs)
            out = conv(new_lhs, rhs, fgc, bgc)
        return [_reshape_axis_out_of(b, os_[0], size, out)], [os_[0]]
    size = _shape(rhs)[dr]
    if fgc == 1 and bgc == 1:
        out = conv(lhs, _reshape_axis_into(b, dr, rs[0], rhs), fgc, bgc)
        return [_reshape_axis_out_of(b, os_[1], size, out)], [os_[1]]
    groups = fgc if fgc > 1 else bgc
    new_rhs = _reshape_axis_out_of(b, rs[0] + int(dr <= rs[0]), groups, rhs)
    new_rhs = _reshape_axis_into(b, dr + int(rs[0] < dr), rs[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(b, rs[0], rs[0], new_rhs)
    out = conv(lhs, new_rhs, fgc, bgc)
    out = _reshape_axis_out_of(b, os_[1], groups, out)
    out = _reshape_axis_out_of(b, os_[1] + 1, size, out)
    out = _reshape_axis_into(b, os_[1], os_[1] + 1, out)
    return [out], [os_[1]]


# --- sort --------------------------------------------------------------------------------------


@_rule(BATCH_RULES, "stablehlo.sort")
def _sort_batch(b, op, args, dims):
    size = next(_shape(v)[d] for v, d in zip(args, dims) if d is not None)
    inputs = [bdim_to_front(b, v, d, size) for v, d in zip(args, dims)]
    rank = len(_shape(op.operands[0]))
    props = dict(op.properties)
    props["dimension"] = stablehlo.i64_attr(_int(op, "dimension", -1) % rank + 1)
    types = [_batched_type(r.type, size) for r in op.results]
    res = _with_regions(b, op, inputs, types, props)
    return list(res.results), [0] * len(types)


def take_along(b: Builder, v: Value, perm: Value, dim: int) -> Value:
    """`take_along_axis(v, perm, dim)` for `perm` of `v`'s shape: one gather whose every other
    dimension is a batching dimension."""
    rank = len(_shape(v))
    others = tuple(d for d in range(rank) if d != dim)
    indices = stablehlo.reshape(b, perm, (*_shape(perm), 1))
    dn = GatherDimensionNumbers.get(collapsed_slice_dims=(dim,), operand_batching_dims=others,
                                    start_indices_batching_dims=others, start_index_map=(dim,),
                                    index_vector_dim=rank)
    return stablehlo.gather(b, v, indices, dn, [1] * rank)


@_rule(JVP_RULES, "stablehlo.sort")
def _sort_jvp(b, op, xs, ts):
    # the permutation: the same sort with an iota carried along, then each tangent follows it
    rank = len(_shape(xs[0]))
    dim = _int(op, "dimension", -1) % rank
    iota = stablehlo.iota(b, RankedTensorType(_shape(xs[0]), I32, None), dim)
    props = dict(op.properties)
    types = [*(v.type for v in xs), iota.type]
    new = Operation.create(op.name, [*xs, iota], types, props, dict(op.attributes), (), (), b.location)
    region = op.regions[0].clone({})
    block = region.entry
    scalar = RankedTensorType((), I32, None)
    block.add_argument(scalar)  # the comparator ignores the iota's pair of arguments
    block.add_argument(scalar)
    new.add_region(region)
    perm = b.insert(new).results[-1]
    return [None if t is None else take_along(b, t, perm, dim) for t in ts]


# --- elementwise tangents the core table lacks -------------------------------------------------


@_rule(JVP_RULES, "stablehlo.clamp")
def _clamp_jvp(b, op, xs, ts):
    lo, x, hi = xs
    shape = _shape(x)

    def wide(v: Value) -> Value:
        return v if _shape(v) == shape else stablehlo.broadcast_in_dim(b, v, shape, [])

    lo_w, hi_w = wide(lo), wide(hi)
    zero = _zeros(b, x)
    out = None
    # as JAX: the bound's tangent where the bound is active, the operand's strictly inside
    if ts[0] is not None:
        active = stablehlo.and_(b, stablehlo.compare(b, lo_w, x, "GT"), stablehlo.compare(b, lo_w, hi_w, "LT"))
        out = stablehlo.select(b, active, wide(ts[0]), zero)
    if ts[1] is not None:
        inside = stablehlo.and_(b, stablehlo.compare(b, x, lo_w, "GT"), stablehlo.compare(b, x, hi_w, "LT"))
        t = stablehlo.select(b, inside, ts[1], zero)
        out = t if out is None else stablehlo.add(b, out, t)
    if ts[2] is not None:
        t = stablehlo.select(b, stablehlo.compare(b, hi_w, x, "LT"), wide(ts[2]), zero)
        out = t if out is None else stablehlo.add(b, out, t)
    return [out]


@_rule(JVP_RULES, "stablehlo.remainder")
def _remainder_jvp(b, op, xs, ts):
    x, y = xs
    out = ts[0]
    if ts[1] is not None:  # d/dy = -round_toward_zero(x / y)
        q = stablehlo.divide(b, x, y)
        trunc = stablehlo.multiply(b, stablehlo.sign(b, q), stablehlo.floor(b, stablehlo.abs_(b, q)))
        t = stablehlo.negate(b, stablehlo.multiply(b, ts[1], trunc))
        out = t if out is None else stablehlo.add(b, out, t)
    return [out]


@_rule(JVP_RULES, "stablehlo.atan2")
def _atan2_jvp(b, op, xs, ts):
    y, x = xs
    denom = stablehlo.add(b, stablehlo.multiply(b, x, x), stablehlo.multiply(b, y, y))
    out = None
    if ts[0] is not None:
        out = stablehlo.divide(b, stablehlo.multiply(b, ts[0], x), denom)
    if ts[1] is not None:
        t = stablehlo.negate(b, stablehlo.divide(b, stablehlo.multiply(b, ts[1], y), denom))
        out = t if out is None else stablehlo.add(b, out, t)
    return [out]


def _no_gradient(b, op, cts):
    return [None] * len(op.operands)


def _zero_tangent(b, op, xs, ts):
    return [None] * len(op.results)


VJP_RULES.setdefault("stablehlo.bitcast_convert", _no_gradient)
JVP_RULES.setdefault("stablehlo.bitcast_convert", _zero_tangent)


# --- products (reduce and reduce_window with a multiply body) -----------------------------------


def _cumprod(b: Builder, v: Value, axis: int) -> Value:
    """The inclusive cumulative product of `v` along `axis` (a reduce_window)."""
    n = _shape(v)[axis]
    rank = len(_shape(v))
    window = [1] * rank
    window[axis] = n
    padding = [(0, 0)] * rank
    padding[axis] = (n - 1, 0)
    one = _scalar(b, 1, v.type.element_type)
    return stablehlo.reduce_window(b, [v], [one], window,
                                   lambda bb, args: [stablehlo.multiply(bb, args[0], args[1])], padding=padding)


def _exclusive_products(b: Builder, x: Value, axis: int) -> Value:
    """`prod_{j != i} x[j]` along `axis` for every i, exact with zeros: the exclusive cumulative
    products from both ends, multiplied."""
    shape = _shape(x)
    n = shape[axis]
    if n == 1:
        return full(b, 1, x.type)
    ones_shape = list(shape)
    ones_shape[axis] = 1
    ones = full(b, 1, RankedTensorType(tuple(ones_shape), x.type.element_type, None))
    starts, limits = [0] * len(shape), list(shape)
    limits[axis] = n - 1
    left = stablehlo.concatenate(b, [ones, stablehlo.slice_(b, _cumprod(b, x, axis), starts, limits)], axis)
    rev = stablehlo.reverse(b, x, [axis])
    right = stablehlo.concatenate(b, [ones, stablehlo.slice_(b, _cumprod(b, rev, axis), starts, limits)], axis)
    return stablehlo.multiply(b, left, stablehlo.reverse(b, right, [axis]))


def _flatten_axes(b: Builder, x: Value, dims: Sequence[int]) -> tuple[Value, list[int]]:
    """`x` with `dims` moved last and merged into one axis; also the permutation used."""
    rank = len(_shape(x))
    kept = [d for d in range(rank) if d not in dims]
    perm = kept + list(dims)
    v = stablehlo.transpose(b, x, perm) if perm != list(range(rank)) else x
    shape = [_shape(x)[d] for d in kept]
    n = int(np.prod([_shape(x)[d] for d in dims], dtype=np.int64))
    return stablehlo.reshape(b, v, (*shape, n)), perm


def _product_partials(b: Builder, x: Value, dims: Sequence[int]) -> Value:
    """d prod(x over dims) / dx, of the shape of `x`."""
    flat, perm = _flatten_axes(b, x, dims)
    partial = _exclusive_products(b, flat, len(_shape(flat)) - 1)
    permuted = [_shape(x)[p] for p in perm]
    v = stablehlo.reshape(b, partial, permuted)
    inverse = [int(i) for i in np.argsort(perm)]
    return stablehlo.transpose(b, v, inverse) if inverse != list(range(len(inverse))) else v


_core_reduce_vjp = VJP_RULES.get("stablehlo.reduce")
_core_reduce_jvp = JVP_RULES.get("stablehlo.reduce")


@_rule(VJP_RULES, "stablehlo.reduce")
def _reduce_vjp(b, op, cts):
    if stablehlo.reduction_body(op) != "stablehlo.multiply" or not is_float(op.operands[0].type):
        if _core_reduce_vjp is None:
            raise _fail("vjp", op, "with this body")
        return _core_reduce_vjp(b, op, cts)
    x = op.operands[0]
    dims = _ints(op, "dimensions")
    kept = [d for d in range(len(_shape(x))) if d not in dims]
    if not dims:
        return [cts[0], None]
    g = stablehlo.broadcast_in_dim(b, cts[0], _shape(x), kept)
    return [stablehlo.multiply(b, g, _product_partials(b, x, dims)), None]


@_rule(JVP_RULES, "stablehlo.reduce")
def _reduce_jvp(b, op, xs, ts):
    if stablehlo.reduction_body(op) != "stablehlo.multiply" or not is_float(xs[0].type):
        if _core_reduce_jvp is None:
            raise _fail("jvp", op, "with this body")
        return _core_reduce_jvp(b, op, xs, ts)
    if ts[1] is not None:
        raise _fail("jvp", op, "with a differentiated initial value")
    x = xs[0]
    dims = _ints(op, "dimensions")
    if ts[0] is None:
        return [None]
    if not dims:
        return [ts[0]]
    return [reduce_sum(b, stablehlo.multiply(b, ts[0], _product_partials(b, x, dims)), dims)]


_core_reduce_window_jvp = JVP_RULES.get("stablehlo.reduce_window")


@_rule(JVP_RULES, "stablehlo.reduce_window")
def _reduce_window_jvp(b, op, xs, ts):
    axis = _cumulative_product_axis(op)
    if axis is None or ts[1] is not None:
        if _core_reduce_window_jvp is None:
            raise _fail("jvp", op, "with this body")
        return _core_reduce_window_jvp(b, op, xs, ts)
    if ts[0] is None:
        return [None]
    return [_cumprod_jvp(b, xs[0], ts[0], axis)]


def _cumulative_product_axis(op: Operation) -> int | None:
    """The axis of a reduce_window computing a cumulative product (as lnp.cumprod emits), or None."""
    if stablehlo.reduction_body(op) != "stablehlo.multiply" or not is_float(op.operands[0].type):
        return None
    x = op.operands[0]
    shape = _shape(x)
    rank = len(shape)
    window = _ints(op, "window_dimensions")
    for name in ("window_strides", "base_dilations", "window_dilations"):
        if _ints(op, name) not in ([], [1] * rank):
            return None
    attr = op.properties.get("padding")
    flat = [0] * (2 * rank) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
    axes = [d for d in range(rank) if window[d] != 1 or flat[2 * d] or flat[2 * d + 1]]
    if len(axes) != 1:
        return None
    a = axes[0]
    if window[a] != shape[a] or flat[2 * a:2 * a + 2] != [shape[a] - 1, 0]:
        return None
    return a


def _cumprod_jvp(b: Builder, x: Value, t: Value, axis: int) -> Value:
    """The tangent of the cumulative product of `x` along `axis`, exact with zeros: for each
    position i, the cumulative product of x with x[i] replaced by t[i] (an (n, n) expansion along a
    new axis), summed over the positions i <= j."""
    shape = _shape(x)
    n = shape[axis]
    big = (*shape[:axis], n, *shape[axis:])  # the new axis `i` at axis, the original `k` at axis + 1
    keep = [d if d < axis else d + 1 for d in range(len(shape))]
    xb = stablehlo.broadcast_in_dim(b, x, big, keep)
    tb = stablehlo.broadcast_in_dim(b, t, big, keep)
    i32 = RankedTensorType(big, I32, None)
    i_idx, k_idx = stablehlo.iota(b, i32, axis), stablehlo.iota(b, i32, axis + 1)
    replaced = stablehlo.select(b, stablehlo.compare(b, i_idx, k_idx, "EQ"), tb, xb)
    products = _cumprod(b, replaced, axis + 1)
    terms = stablehlo.select(b, stablehlo.compare(b, i_idx, k_idx, "LE"), products, _zeros(b, products))
    return reduce_sum(b, terms, [axis])


__all__ = ["take_along"]


# --- tan and cbrt ------------------------------------------------------------------------------


def _tan_derivative(b: Builder, z: Value) -> Value:
    return stablehlo.add(b, full(b, 1, z.type), stablehlo.multiply(b, z, z))  # 1 + tan(x)^2


def _cbrt_derivative(b: Builder, z: Value) -> Value:
    return stablehlo.divide(b, full(b, 1, z.type), stablehlo.multiply(b, full(b, 3, z.type),
                                                                      stablehlo.multiply(b, z, z)))


def _unary_rules(name: str, derivative: Callable[[Builder, Value], Value]) -> None:
    """Register `g * derivative(result)` (VJP) and `t * derivative(result)` (JVP) for `name`
    unless the core tables have a rule already."""
    def vjp(b, op, cts):
        return [stablehlo.multiply(b, cts[0], derivative(b, op.results[0]))]

    def jvp(b, op, xs, ts):
        return [None if ts[0] is None else stablehlo.multiply(b, ts[0], derivative(b, op.results[0]))]
    VJP_RULES.setdefault(name, vjp)
    JVP_RULES.setdefault(name, jvp)


_unary_rules("stablehlo.tan", _tan_derivative)
_unary_rules("stablehlo.cbrt", _cbrt_derivative)



# --- max / min windows (pooling, cummax): select_and_scatter ------------------------------------


def _window_chooser(op: Operation) -> tuple[str, list[int], list[int], list[tuple[int, int]]] | None:
    """('GE' for max / 'LE' for min, window, strides, padding) of a one-input reduce_window with a
    maximum or minimum body and no dilation, else None."""
    body = stablehlo.reduction_body(op)
    if body not in ("stablehlo.maximum", "stablehlo.minimum") or not is_float(op.operands[0].type):
        return None
    rank = len(_shape(op.operands[0]))
    for name in ("base_dilations", "window_dilations"):
        if _ints(op, name) not in ([], [1] * rank):
            return None
    window = _ints(op, "window_dimensions")
    strides = _ints(op, "window_strides") or [1] * rank
    attr = op.properties.get("padding")
    flat = [0] * (2 * rank) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
    padding = [(flat[2 * d], flat[2 * d + 1]) for d in range(rank)]
    return ("GE" if body == "stablehlo.maximum" else "LE"), window, strides, padding


_core_reduce_window_vjp = VJP_RULES.get("stablehlo.reduce_window")


@_rule(VJP_RULES, "stablehlo.reduce_window")
def _reduce_window_vjp(b, op, cts):
    chooser = _window_chooser(op)
    if chooser is None:
        if _core_reduce_window_vjp is None:
            raise _fail("vjp", op, "with this body")
        return _core_reduce_window_vjp(b, op, cts)
    if cts[0] is None:
        return [None, None]
    direction, window, strides, padding = chooser
    x = op.operands[0]
    et = x.type.element_type
    # as JAX: each window's cotangent goes to the (first) element it selected
    new = Operation.create("stablehlo.select_and_scatter", [x, cts[0], _scalar(b, 0, et)], [x.type],
                           {"window_dimensions": stablehlo.i64_array(window),
                            "window_strides": stablehlo.i64_array(strides),
                            "padding": stablehlo.padding_attr(padding)}, {}, (), (), b.location)
    scalar = RankedTensorType((), et, None)
    new.add_region(stablehlo._build_region([scalar, scalar],
                                           lambda bb, a: [stablehlo.compare(bb, a[0], a[1], direction)]))
    new.add_region(stablehlo._build_region([scalar, scalar], _add_body))
    return [b.insert(new).results[0], None]


@_rule(JVP_RULES, "stablehlo.reduce_window")
def _reduce_window_jvp_choosers(b, op, xs, ts):
    chooser = _window_chooser(op)
    if chooser is None or ts[1] is not None:
        return _reduce_window_jvp(b, op, xs, ts)
    if ts[0] is None:
        return [None]
    direction = "GT" if chooser[0] == "GE" else "LT"
    x, init = xs
    et = x.type.element_type
    scalar = RankedTensorType((), et, None)
    # the tangent of each window's first extremum: a two-input reduce_window carrying it along
    props = dict(op.properties)
    new = Operation.create(op.name, [x, ts[0], init, _scalar(b, 0, et)], [op.results[0].type] * 2, props, {}, (), (),
                           b.location)
    choose = stablehlo.maximum if chooser[0] == "GE" else stablehlo.minimum

    def body(bb: Builder, a: list[Value]) -> list[Value]:
        acc_v, acc_t, v, t = a
        better = stablehlo.compare(bb, v, acc_v, direction)
        return [choose(bb, acc_v, v), stablehlo.select(bb, better, t, acc_t)]
    new.add_region(stablehlo._build_region([scalar] * 4, body))
    return [b.insert(new).results[1]]


# Public for the front end (loom.lax traces gathers, scatters and convolutions with the same
# bounds checks and dimension numbers).
clamp_starts, in_bounds, conv_dimension_numbers = _clamp_starts, _in_bounds, _dimension_numbers


import loom.transforms.numpy_rules  # noqa: E402, F401  (rules of the chlo ops loom.numpy emits)
import loom.transforms.remat_rules  # noqa: E402, F401  (optimization_barrier and loom.checkpoint's rules)
