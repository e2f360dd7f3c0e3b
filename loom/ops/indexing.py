"""Indexing ops: gather, scatter, dynamic_slice, dynamic_update_slice: their VJP, JVP and
batching rules, and (after the imports) their numpy kernels, scatter's code generation and the
interpreter's reference rules; torch kernels in `loom.ops.indexing_torch`.

- gather: its cotangent is a scatter-add of the cotangent into zeros (the start indices clamped
  first, as gather clamps them); its tangent is the same gather of the tangent; batched, the new
  dimension becomes an offset dimension (batched operand), a leading batch dimension of the
  indices (batched indices), or an operand / indices batching dimension pair (both).
- scatter (update computations that overwrite, add, take the maximum / minimum, or multiply
  with constant updates or unique indices): add passes the cotangent to the operand and gathers
  it for the updates (dropped out-of-bounds windows get none); overwrite masks them by which
  update won, found by scattering ids; maximum / minimum share it evenly among the operand and
  the updates equal to the result (as JAX). Batched with the batching dimensions of the spec.
  Its VJP stays explicit: transposition cannot serve a scatter that overwrites.
- dynamic_slice / dynamic_update_slice: each other's transposes; batched start indices turn them
  into a gather / scatter with batching dimensions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.backend import common
from loom.backend.common import dtype_of, torch_kernels_in
from loom.backend.common import shape_of as type_shape
from loom.backend.compiled.codegen import FunctionCodegen, codegen_rule
from loom.backend.compiled.regions import has_shell_dtypes, is_elementwise_region, reducer_ufunc
from loom.backend.interpreter import Interpreter
from loom.backend.interpreter import rule as interpreter_rule
from loom.backend.kernels import KERNELS, Kernel, Operand, Rest, direct, kernel
from loom.dialects import stablehlo
from loom.dialects.stablehlo import GatherDimensionNumbers, ScatterDimensionNumbers
from loom.dialects.stablehlo.attributes import enum_attr
from loom.ir.attributes import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.types import RankedTensorType, i1, i64
from loom.ops.registry import declare, register, unsupported
from loom.transforms.autodiff import VJP_RULES, full, is_float
from loom.transforms.autodiff import props_ints as _ints
from loom.transforms.batching import BATCH_RULES, bdim_to_front, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.rule_builders import (
    I32,
    add_body,
    batched_type,
    clamp_starts,
    in_bounds,
    missing_rule,
    rule,
    scalar_constant,
    shape_of,
    with_regions,
    zeros_like,
)
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors

# Kernels -----------------------------------------------------------------------------------------

# numpy kernels here; torch kernels in loom.ops.indexing_torch (imported with torch)

@kernel("stablehlo.dynamic_slice")
def _dynamic_slice(op: Operation) -> Kernel:
    return Kernel(dynamic_slice, Operand(0), common.ints(op.get_attr("slice_sizes")), Rest(1))


def _clamped_starts(shape, sizes, starts) -> tuple:
    return tuple(slice(s, s + n) for s, n in
                 ((min(max(int(i), 0), d - n), n) for i, d, n in zip(starts, shape, sizes)))


def dynamic_slice(x, sizes, *starts):
    return x[_clamped_starts(x.shape, sizes, starts)]


def dynamic_update_slice(x, update, *starts):
    out = np.array(x)
    out[_clamped_starts(x.shape, update.shape, starts)] = update
    return out


KERNELS["stablehlo.dynamic_update_slice"] = direct(dynamic_update_slice)



# Gather ----------------------------------------------------------------------------------------

class GatherDims:
    """The dimension numbers of a gather (read from `#stablehlo.gather<...>`)."""

    def __init__(self, attr) -> None:
        f = common.struct_fields(attr)
        self.offset_dims = f.get("offset_dims", ())
        self.collapsed_slice_dims = f.get("collapsed_slice_dims", ())
        self.operand_batching_dims = f.get("operand_batching_dims", ())
        self.start_indices_batching_dims = f.get("start_indices_batching_dims", ())
        self.start_index_map = f.get("start_index_map", ())
        self.index_vector_dim = f.get("index_vector_dim", 0)


@kernel("stablehlo.gather")
def _gather(op: Operation) -> Kernel:
    dims = GatherDims(op.get_attr("dimension_numbers"))
    sizes = common.ints(op.get_attr("slice_sizes"))
    return Kernel(gather, Operand(0), Operand(1), dims, tuple(sizes))


def _batch_coordinates(idx_shape: tuple[int, ...], index_vector_dim: int):
    """The start-indices dims that are batch dims (all but the index vector dim), in order."""
    return [d for d in range(len(idx_shape)) if d != index_vector_dim]


def gather(operand, start_indices, dims: GatherDims, slice_sizes):
    """Vectorised gather: one advanced-indexing read of every (batch, offset) element."""
    operand = np.asarray(operand)
    idx = np.asarray(start_indices)
    ivd = dims.index_vector_dim
    if ivd == idx.ndim:
        idx = idx[..., None]
    batch_dims = _batch_coordinates(idx.shape, ivd)
    idx = np.moveaxis(idx, ivd, -1).astype(np.int64)
    batch_shape = idx.shape[:-1]
    nb = len(batch_shape)
    kept = [d for d in range(operand.ndim) if d not in dims.collapsed_slice_dims and
            d not in dims.operand_batching_dims]
    nw = len(kept)
    index = []
    for d in range(operand.ndim):
        if d in dims.start_index_map:
            k = dims.start_index_map.index(d)
            start = np.clip(idx[..., k], 0, operand.shape[d] - slice_sizes[d])
        elif d in dims.operand_batching_dims:
            sd = dims.start_indices_batching_dims[dims.operand_batching_dims.index(d)]
            axis = batch_dims.index(sd)
            shape = [1] * nb
            shape[axis] = batch_shape[axis]
            start = np.arange(batch_shape[axis]).reshape(shape)
        else:
            start = np.zeros((1,) * nb, np.int64)
        start = np.reshape(start, np.shape(start) + (1,) * nw)
        if d in kept:
            shape = [1] * (nb + nw)
            shape[nb + kept.index(d)] = slice_sizes[d]
            start = start + np.arange(slice_sizes[d]).reshape(shape)
        index.append(start)
    out = operand[tuple(index)] if operand.ndim else np.broadcast_to(operand, batch_shape)
    out = np.broadcast_to(out, (*batch_shape, *(slice_sizes[d] for d in kept)))
    return np.transpose(out, gather_permutation(dims, nb, nb + nw))


def gather_permutation(dims: GatherDims, nb: int, rank: int) -> list[int]:
    """The axes of a gather's result among (batch dims..., offset dims...): result dim i is an
    offset dim where `offset_dims` names it, else the next batch dim."""
    perm, b = [], 0
    for i in range(rank):
        if i in dims.offset_dims:
            perm.append(nb + dims.offset_dims.index(i))
        else:
            perm.append(b)
            b += 1
    return perm


# Scatter ---------------------------------------------------------------------------------------

class ScatterDims:
    """The dimension numbers of a scatter (read from `#stablehlo.scatter<...>`)."""

    def __init__(self, attr) -> None:
        f = common.struct_fields(attr)
        self.update_window_dims = f.get("update_window_dims", ())
        self.inserted_window_dims = f.get("inserted_window_dims", ())
        self.input_batching_dims = f.get("input_batching_dims", ())
        self.scatter_indices_batching_dims = f.get("scatter_indices_batching_dims", ())
        self.scatter_dims_to_operand_dims = f.get("scatter_dims_to_operand_dims", ())
        self.index_vector_dim = f.get("index_vector_dim", 0)


def scatter_index(operand_shape, scatter_indices, updates_shape, dims: ScatterDims):
    """For every update element, its operand index (one int array per operand dim, each of the
    updates' shape) and whether its window lies in bounds (XLA skips windows that do not)."""
    idx = np.asarray(scatter_indices)
    ivd = dims.index_vector_dim
    if ivd == idx.ndim:
        idx = idx[..., None]
    batch_dims = _batch_coordinates(idx.shape, ivd)
    idx = np.moveaxis(idx, ivd, -1).astype(np.int64)
    rank_u = len(updates_shape)
    scatter_axes = [d for d in range(rank_u) if d not in dims.update_window_dims]
    window_operand_dims = [d for d in range(len(operand_shape)) if d not in dims.inserted_window_dims and
                           d not in dims.input_batching_dims]
    window_sizes = {d: updates_shape[u] for d, u in zip(window_operand_dims, dims.update_window_dims)}

    def place(arr: np.ndarray, axes: list[int]) -> np.ndarray:
        shape = [1] * rank_u
        for a, n in zip(axes, arr.shape):
            shape[a] = n
        return arr.reshape(shape)

    valid = np.ones([updates_shape[a] for a in scatter_axes], bool)
    index = []
    for d in range(len(operand_shape)):
        if d in dims.scatter_dims_to_operand_dims:
            start = idx[..., dims.scatter_dims_to_operand_dims.index(d)]
        elif d in dims.input_batching_dims:
            sd = dims.scatter_indices_batching_dims[dims.input_batching_dims.index(d)]
            axis = batch_dims.index(sd)
            shape = [1] * len(scatter_axes)
            shape[axis] = idx.shape[axis]
            start = np.broadcast_to(np.arange(idx.shape[axis]).reshape(shape), idx.shape[:-1])
        else:
            start = np.zeros(idx.shape[:-1], np.int64)
        size = window_sizes.get(d, 1)
        valid &= (start >= 0) & (start <= operand_shape[d] - size)
        full = place(start, scatter_axes)
        if d in window_sizes:
            full = full + place(np.arange(size), [dims.update_window_dims[window_operand_dims.index(d)]])
        index.append(np.broadcast_to(full, updates_shape))
    return index, np.broadcast_to(place(valid, scatter_axes), updates_shape)


def scatter_ufunc(operand, indices, updates, dims: ScatterDims, ufunc):
    """Scatter whose update computation is a known binary op (`ufunc`, or None to overwrite)."""
    out = np.array(operand)
    updates = np.asarray(updates)
    index, valid = scatter_index(out.shape, indices, updates.shape, dims)
    index = tuple(i[valid] for i in index)
    if ufunc is None:
        out[index] = updates[valid]
    else:
        ufunc.at(out, index, updates[valid])
    return out


# Code generation ---------------------------------------------------------------------------------

def scatter_update_ufunc(region: Region) -> tuple[bool, np.ufunc | None]:
    """(recognised, ufunc): `return update` is (True, None); `return op(old, update)` is
    (True, op's ufunc)."""
    block = region.blocks[0]
    if len(block.args) != 2:
        return False, None
    ops = list(block.ops)
    if len(ops) == 1 and ops[0].operands == (block.args[1],):
        return True, None
    ufunc = reducer_ufunc(region)
    return (ufunc is not None), ufunc


def scatter_sequential(body: Callable, inputs: Sequence[Any], indices, updates: Sequence[Any],
                       dims: ScatterDims) -> tuple:
    """Scatter with any update computation: one update at a time, in order."""
    outs = [np.array(x) for x in inputs]
    updates = [np.asarray(u) for u in updates]
    index, valid = scatter_index(outs[0].shape, indices, updates[0].shape, dims)
    for position in zip(*(i[valid] for i in index), *(u[valid] for u in updates)):
        target = position[:outs[0].ndim]
        values = position[outs[0].ndim:]
        new = body(*(o[target] for o in outs), *values)
        for o, v in zip(outs, new):
            o[target] = v
    return tuple(outs)


def _torch():
    """`loom.ops.indexing_torch` (it imports torch): the runtime of the torch code."""
    from loom.ops import indexing_torch
    return indexing_torch


_SCATTER_KINDS = {None: None, np.add: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min"}


@codegen_rule("stablehlo.scatter")
def _scatter(gen: FunctionCodegen, op: Operation) -> None:
    """An update that replaces or is one known binary op: one indexed update of the library
    (numpy: `scatter_ufunc`; torch: a `Scatter` planned for the static shapes); any other update
    computation is applied update by update (numpy: `scatter_sequential`; torch: `ScatterRounds`,
    rounds of updates to distinct positions, for static shapes and an elementwise update)."""
    n = len(op.results)
    inputs, indices, updates = op.operands[:n], op.operands[n], op.operands[n + 1:]
    dims = ScatterDims(op.get_attr("scatter_dimension_numbers"))
    known, ufunc = scatter_update_ufunc(op.regions[0]) if n == 1 else (False, None)
    if not gen.torch:
        dims_name = gen.mod.hoist(dims, gen.mod.fresh("scatter_dims"))
        if known:
            gen.bind(op, f"{gen.mod.function(scatter_ufunc)}({gen.name(inputs[0])}, {gen.name(indices)}, "
                         f"{gen.name(updates[0])}, {dims_name}, {gen.mod.literal(ufunc)})")
            return
        body = gen.region_function(op.regions[0], "update")
        gen.bind(op, f"{gen.mod.function(scatter_sequential)}({body}, {gen.packed(inputs)}, {gen.name(indices)}, "
                     f"{gen.packed(updates)}, {dims_name})", returns_tuple=True)
        return
    static = common.static_operands(op)
    complex_ok = dtype_of(inputs[0].type).kind != "c" or ufunc in (None, np.add)
    if known and ufunc in _SCATTER_KINDS and complex_ok and static:
        plan = _torch().Scatter(type_shape(inputs[0].type), type_shape(indices.type), type_shape(updates[0].type),
                                dims, _SCATTER_KINDS[ufunc], unsigned=has_shell_dtypes(op.operands))
        gen.bind(op, f"{gen.mod.hoist(plan, gen.mod.fresh(plan.__name__))}({gen.name(inputs[0])}, "
                     f"{gen.name(indices)}, {gen.name(updates[0])})")
        return
    if not (static and not has_shell_dtypes(op.operands) and is_elementwise_region(op.regions[0])):
        gen.not_lowered(op, "dynamic shapes, unsigned operands or an update computation that is not elementwise")
        return
    rounds = _torch().ScatterRounds(type_shape(inputs[0].type), type_shape(indices.type),
                                    type_shape(updates[0].type), dims)
    body = gen.region_function(op.regions[0], "update")
    gen.bind(op, f"{gen.mod.hoist(rounds, gen.mod.fresh(rounds.__name__))}({body}, {gen.packed(inputs)}, "
                 f"{gen.name(indices)}, {gen.packed(updates)})", returns_tuple=True)


# The reference interpreter's rules (the spec's definitions, element by element) ---------------

def _index_vector(indices: np.ndarray, batch_index: Sequence[int], ivd: int) -> list[int]:
    if ivd == indices.ndim:
        return [int(indices[tuple(batch_index)])]
    full = list(batch_index)
    full.insert(ivd, slice(None))
    return [int(v) for v in indices[tuple(full)]]


def gather_reference(operand: np.ndarray, indices: np.ndarray, dims: GatherDims, slice_sizes: Sequence[int],
                     out_shape: Sequence[int]) -> np.ndarray:
    out = np.empty(out_shape, operand.dtype)
    ivd = dims.index_vector_dim
    batch_dims_out = [d for d in range(len(out_shape)) if d not in dims.offset_dims]
    indices_batch_dims = [d for d in range(max(indices.ndim, ivd + 1)) if d != ivd]
    for result_index in np.ndindex(*out_shape):
        batch_index = [result_index[d] for d in batch_dims_out]
        vector = _index_vector(indices, batch_index, ivd)
        start = [0] * operand.ndim
        for k, d in enumerate(dims.start_index_map):
            start[d] = vector[k]
        for od, sd in zip(dims.operand_batching_dims, dims.start_indices_batching_dims):
            start[od] = batch_index[indices_batch_dims.index(sd)]
        start = [min(max(s, 0), operand.shape[d] - slice_sizes[d]) for d, s in enumerate(start)]
        offset = [result_index[d] for d in dims.offset_dims]
        full, k = [], 0
        for d in range(operand.ndim):
            if d in dims.collapsed_slice_dims or d in dims.operand_batching_dims:
                full.append(start[d])
            else:
                full.append(start[d] + offset[k])
                k += 1
        out[result_index] = operand[tuple(full)]
    return out


@interpreter_rule("stablehlo.gather")
def _gather_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    dims = GatherDims(op.get_attr("dimension_numbers"))
    sizes = common.ints(op.get_attr("slice_sizes"))
    return [gather_reference(np.asarray(args[0]), np.asarray(args[1]), dims, sizes, type_shape(op.results[0].type))]


def scatter_reference(inputs: list[np.ndarray], indices: np.ndarray, updates: list[np.ndarray], dims: ScatterDims,
                      body: Callable[..., list]) -> list[np.ndarray]:
    results = [np.array(x) for x in inputs]
    ivd = dims.index_vector_dim
    update_shape = updates[0].shape
    scatter_axes = [d for d in range(len(update_shape)) if d not in dims.update_window_dims]
    indices_batch_dims = [d for d in range(max(indices.ndim, ivd + 1)) if d != ivd]
    operand_shape = inputs[0].shape
    window_operand_dims = [d for d in range(len(operand_shape)) if d not in dims.inserted_window_dims and
                           d not in dims.input_batching_dims]
    window_size = {d: update_shape[u] for d, u in zip(window_operand_dims, dims.update_window_dims)}
    for update_index in np.ndindex(*update_shape):
        scatter_index = [update_index[d] for d in scatter_axes]
        vector = _index_vector(indices, scatter_index, ivd)
        start = [0] * len(operand_shape)
        for k, d in enumerate(dims.scatter_dims_to_operand_dims):
            start[d] = vector[k]
        for od, sd in zip(dims.input_batching_dims, dims.scatter_indices_batching_dims):
            start[od] = scatter_index[indices_batch_dims.index(sd)]
        # XLA skips a whole update window that does not fit in the operand.
        if any(s < 0 or s + window_size.get(d, 1) > operand_shape[d] for d, s in enumerate(start)):
            continue
        window_index = [update_index[d] for d in dims.update_window_dims]
        full = list(start)
        for d, w in zip(window_operand_dims, window_index):
            full[d] += w
        full = tuple(full)
        new = body(*(r[full] for r in results), *(u[update_index] for u in updates))
        for r, v in zip(results, new):
            r[full] = v
    return results


@interpreter_rule("stablehlo.scatter")
def _scatter_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    n = (len(args) - 1) // 2
    inputs = [np.asarray(a) for a in args[:n]]
    updates = [np.asarray(a) for a in args[n + 1:]]
    dims = ScatterDims(op.get_attr("scatter_dimension_numbers"))
    return scatter_reference(inputs, np.asarray(args[n]), updates, dims, interp.region_function(op.regions[0]))


torch_kernels_in("loom.ops.indexing_torch")

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


def _set_body(bb: Builder, args: list[Value]) -> list[Value]:
    return [args[1]]


@rule(VJP_RULES, "stablehlo.gather")
def _gather_vjp(b, op, cts):
    x, indices = op.operands
    if not is_float(x.type) or cts[0] is None:
        return [None, None]
    dn, sizes = _gather_props(op)
    clamped = clamp_starts(b, indices, dn.start_index_map, dn.index_vector_dim, shape_of(x), sizes)
    gx = stablehlo.scatter(b, [zeros_like(b, x)], clamped, [cts[0]], _scatter_of_gather(dn), add_body)
    return [gx, None]


@rule(JVP_RULES, "stablehlo.gather")
def _gather_jvp(b, op, xs, ts):
    if ts[0] is None:
        return [None]
    return list(b.insert(op.clone({xs[0]: ts[0]})).results)


def _shift(dims: Sequence[int], by: int = 1) -> tuple[int, ...]:
    return tuple(d + by for d in dims)


@rule(BATCH_RULES, "stablehlo.gather")
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
        v = stablehlo.gather(b, x, indices, new, [shape_of(x)[0], *sizes])
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
    rank = len(shape_of(x))
    window_dims = [d for d in range(rank) if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
    sizes = [1] * rank
    for d, ud in zip(window_dims, dn.update_window_dims):
        sizes[d] = shape_of(u)[ud]
    return sizes


def _to_updates(b: Builder, v: Value, op: Operation) -> Value:
    """A value over the indices' batch dimensions broadcast to the updates' shape."""
    u = op.operands[2]
    dn = op.properties["scatter_dimension_numbers"]
    scatter_dims = [d for d in range(len(shape_of(u))) if d not in dn.update_window_dims]
    return stablehlo.broadcast_in_dim(b, v, shape_of(u), scatter_dims)


def _unique(op: Operation) -> bool:
    attr = op.properties.get("unique_indices")
    return attr is not None and bool(attr.value)


def _constant_defined(v: Value) -> bool:
    owner = v.owner_op
    return owner is not None and owner.name == "stablehlo.constant"


@rule(VJP_RULES, "stablehlo.scatter")
def _scatter_vjp(b, op, cts):
    kind = _scatter_kind(op)
    g = cts[0]
    if len(op.results) != 1 or g is None:
        return [None] * len(op.operands)
    x, indices, u = op.operands
    dn = op.properties["scatter_dimension_numbers"]
    sizes = _scatter_window_sizes(op)
    gdn = _gather_of_scatter(dn)
    valid = _to_updates(b, in_bounds(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim,
                                      shape_of(x), sizes), op)
    clamped = clamp_starts(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim, shape_of(x), sizes)

    def gather_at(v: Value) -> Value:
        return stablehlo.gather(b, v, clamped, gdn, sizes)

    def masked(mask: Value, v: Value) -> Value:
        return stablehlo.select(b, mask, v, zeros_like(b, v))

    if kind == "add":
        return [g, None, masked(valid, gather_at(g))]
    if kind == "set":
        # which update won each position: scatter ids, read them back (as JAX's scatter JVP)
        scatter_shape = [n for d, n in enumerate(shape_of(u)) if d not in dn.update_window_dims]
        count = int(np.prod(scatter_shape, dtype=np.int64))
        ids = stablehlo.iota(b, RankedTensorType((max(count, 1),), I32, None), 0)
        ids = stablehlo.add(b, ids, full(b, 1, ids.type))
        if count == 0:
            ids = stablehlo.slice_(b, ids, [0], [0], [1])
        ids = _to_updates(b, stablehlo.reshape(b, ids, scatter_shape), op)
        zeros_i = full(b, 0, RankedTensorType(shape_of(x), I32, None))
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
        count = stablehlo.add(b, kept, stablehlo.scatter(b, [zeros_like(b, x)], indices, [share_u], dn, add_body))
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
    raise missing_rule("vjp", op, f"with update computation {kind or '(not a single set/add/multiply)'}"
                + (" of non-constant updates without unique_indices" if kind == "multiply" else ""))


@rule(JVP_RULES, "stablehlo.scatter")
def _scatter_jvp(b, op, xs, ts):
    kind = _scatter_kind(op)
    x, _, u = xs
    tx, tu = ts[0], ts[2]
    if kind in ("set", "add"):  # linear: the same scatter of the tangents
        return list(b.insert(op.clone({x: tx if tx is not None else zeros_like(b, x),
                                       u: tu if tu is not None else zeros_like(b, u)})).results)
    if kind in ("maximum", "minimum") and is_float(x.type):
        # as JAX: the mean of the tangents of the operand and the updates equal to the result
        dn = op.properties["scatter_dimension_numbers"]
        indices = xs[1]
        out = op.results[0]
        sizes = _scatter_window_sizes(op)
        clamped = clamp_starts(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim, shape_of(x), sizes)
        valid = _to_updates(b, in_bounds(b, indices, dn.scatter_dims_to_operand_dims, dn.index_vector_dim,
                                          shape_of(x), sizes), op)
        gathered = stablehlo.gather(b, out, clamped, _gather_of_scatter(dn), sizes)
        share_u = stablehlo.convert(b, stablehlo.and_(b, valid, stablehlo.compare(b, u, gathered, "EQ")),
                                    u.type.element_type)
        kept = stablehlo.convert(b, stablehlo.compare(b, x, out, "EQ"), x.type.element_type)
        count = stablehlo.add(b, kept, stablehlo.scatter(b, [zeros_like(b, x)], indices, [share_u], dn, add_body))
        total = stablehlo.multiply(b, kept, tx) if tx is not None else zeros_like(b, x)
        if tu is not None:
            total = stablehlo.add(b, total, stablehlo.scatter(b, [zeros_like(b, x)], indices,
                                                              [stablehlo.multiply(b, share_u, tu)], dn, add_body))
        return [stablehlo.divide(b, total, count)]
    if kind == "multiply" and (tu is None or _unique(op)):
        out = None if tx is None else b.insert(op.clone({x: tx})).results[0]  # linear in the operand
        if tu is not None:  # unique indices: x * (the update's tangent where written, else 0)
            spread = stablehlo.scatter(b, [zeros_like(b, x)], xs[1], [tu], op.properties["scatter_dimension_numbers"],
                                       add_body)
            t = stablehlo.multiply(b, x, spread)
            out = t if out is None else stablehlo.add(b, out, t)
        return [out]
    raise missing_rule("jvp", op, f"with update computation {kind or '(not a single set/add/multiply)'}"
                + (" and a tangent of the updates (without unique_indices)" if kind == "multiply" else ""))


@rule(BATCH_RULES, "stablehlo.scatter")
def _scatter_batch(b, op, args, dims):
    n = (len(args) - 1) // 2
    dn = op.properties["scatter_dimension_numbers"]
    size = next(shape_of(v)[d] for v, d in zip(args, dims) if d is not None)
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
    types = [batched_type(r.type, size) for r in op.results]
    res = with_regions(b, op, [*inputs, indices, *updates], types, props)
    return list(res.results), [0] * len(types)


# --- dynamic_slice and dynamic_update_slice ----------------------------------------------------


@rule(VJP_RULES, "stablehlo.dynamic_slice")
def _dynamic_slice_vjp(b, op, cts):
    x, starts = op.operands[0], list(op.operands[1:])
    if cts[0] is None or not is_float(x.type):
        return [None] * len(op.operands)
    return [stablehlo.dynamic_update_slice(b, zeros_like(b, x), cts[0], starts), *([None] * len(starts))]


@rule(JVP_RULES, "stablehlo.dynamic_slice")
def _dynamic_slice_jvp(b, op, xs, ts):
    if ts[0] is None:
        return [None]
    return [stablehlo.dynamic_slice(b, ts[0], list(xs[1:]), _ints(op, "slice_sizes"))]


@rule(VJP_RULES, "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_vjp(b, op, cts):
    x, u, starts = op.operands[0], op.operands[1], list(op.operands[2:])
    g = cts[0]
    if g is None:
        return [None] * len(op.operands)
    gx = stablehlo.dynamic_update_slice(b, g, zeros_like(b, u), starts) if is_float(x.type) else None
    gu = stablehlo.dynamic_slice(b, g, starts, shape_of(u)) if is_float(u.type) else None
    return [gx, gu, *([None] * len(starts))]


@rule(JVP_RULES, "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_jvp(b, op, xs, ts):
    x, u = xs[0], xs[1]
    if ts[0] is None and ts[1] is None:
        return [None]
    tx = ts[0] if ts[0] is not None else zeros_like(b, x)
    tu = ts[1] if ts[1] is not None else zeros_like(b, u)
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
            col = stablehlo.clamp(b, scalar_constant(b, 0, et), col, scalar_constant(b, clamp_to[k], et))
        columns.append(stablehlo.reshape(b, col, (size, 1)))
    return columns[0] if len(columns) == 1 else stablehlo.concatenate(b, columns, 1)


@rule(BATCH_RULES, "stablehlo.dynamic_slice")
def _dynamic_slice_batch(b, op, args, dims):
    x, starts = args[0], list(args[1:])
    sizes = _ints(op, "slice_sizes")
    size = next(shape_of(v)[d] for v, d in zip(args, dims) if d is not None)
    x = bdim_to_front(b, x, dims[0], size)
    if all(d is None for d in dims[1:]):  # shared starts: one more dimension sliced whole
        zero = scalar_constant(b, 0, starts[0].type.element_type) if starts else None
        return [stablehlo.dynamic_slice(b, x, [zero, *starts], [size, *sizes])], [0]
    rank = len(sizes)
    if rank == 0:
        return [x], [0]
    indices = _stacked_starts(b, starts, dims[1:], size)
    dn = GatherDimensionNumbers.get(offset_dims=tuple(range(1, rank + 1)), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,), start_index_map=tuple(range(1, rank + 1)),
                                    index_vector_dim=1)
    return [stablehlo.gather(b, x, indices, dn, [1, *sizes])], [0]


@rule(BATCH_RULES, "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_batch(b, op, args, dims):
    x, u, starts = args[0], args[1], list(args[2:])
    size = next(shape_of(v)[d] for v, d in zip(args, dims) if d is not None)
    x = bdim_to_front(b, x, dims[0], size)
    u = bdim_to_front(b, u, dims[1], size)
    if all(d is None for d in dims[2:]):
        zero = scalar_constant(b, 0, starts[0].type.element_type) if starts else None
        return [stablehlo.dynamic_update_slice(b, x, u, [zero, *starts])], [0]
    rank = len(starts)
    # scatter drops windows out of bounds where dynamic_update_slice clamps: clamp first
    limits = [xs - us for xs, us in zip(shape_of(x)[1:], shape_of(u)[1:])]
    indices = _stacked_starts(b, starts, dims[2:], size, limits)
    dn = ScatterDimensionNumbers.get(update_window_dims=tuple(range(1, rank + 1)), input_batching_dims=(0,),
                                     scatter_indices_batching_dims=(0,),
                                     scatter_dims_to_operand_dims=tuple(range(1, rank + 1)), index_vector_dim=1)
    return [stablehlo.scatter(b, [x], indices, [u], dn, _set_body)], [0]



declare("stablehlo.torch_index_select", unsupported("parsed and printed only: loom's front end emits stablehlo.gather"))


# --- sharding rules ----------------------------------------------------------------------------
# Indices may point anywhere along an indexed dimension, which therefore stays whole; a dimension
# taken whole by every slice (an embedding's features) and the indices' batch dimensions may be
# split. Batching dimensions (vmapped gathers) stay whole too.

def _gather_sharding(op):
    dn = op.properties["dimension_numbers"]
    operand, indices, result = shape_of(op.operands[0]), shape_of(op.operands[1]), shape_of(op.results[0])
    sizes = _ints(op, "slice_sizes")
    f = Factors()
    blocked = set()
    def own(n):
        blocked.add(f.new(n))
        return len(f.sizes) - 1
    res: list = [None] * len(result)
    window = [d for d in range(len(operand)) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    op_dims: list = []
    looked_up = set()  # rows picked one at a time: split, each partition gathers the rows it holds
    for d, n in enumerate(operand):
        if d in window and d not in dn.start_index_map and sizes[d] == n:
            k = f.new(n)
            res[dn.offset_dims[window.index(d)]] = k
            op_dims.append(k)
        elif d in dn.collapsed_slice_dims and d in dn.start_index_map and sizes[d] == 1:
            op_dims.append(f.new(n))
            looked_up.add(op_dims[-1])
        else:
            op_dims.append(own(n))
    batch_res = [d for d in range(len(result)) if d not in dn.offset_dims]
    batch_idx = [d for d in range(len(indices)) if d != dn.index_vector_dim]
    idx_dims: list = [None] * len(indices)
    for ri, ii in zip(batch_res, batch_idx):
        if ii in dn.start_indices_batching_dims:
            idx_dims[ii] = own(indices[ii])
        else:
            idx_dims[ii] = res[ri] = f.new(indices[ii])
    for d in range(len(indices)):
        if idx_dims[d] is None:
            idx_dims[d] = own(indices[d])
    for d in range(len(result)):
        if res[d] is None:
            res[d] = own(result[d])
    return f.rule([op_dims, idx_dims], [res], need_replication=blocked, reduction=looked_up, reducer="add",
                  pad_value=_zero_scalar, localize=_gather_localize)


def _zero_scalar(b, op, local, i):
    t = RankedTensorType((), op.operands[i].type.element_type)
    return b.create("stablehlo.constant", [], [t], {"value": DenseElementsAttr.get(np.zeros(()), t)}).results[0]


def _index_vectors(b, it, ivd: int, values) -> Value:
    """A tensor of the indices' type `it` whose index vectors (along `ivd`) hold the scalars
    `values`, one per position."""
    if ivd == len(it.shape):
        return b.create("stablehlo.broadcast_in_dim", [values[0]], [it],
                        {"broadcast_dimensions": DenseArrayAttr.get(i64, [])}).results[0]
    parts = [b.create("stablehlo.reshape", [v], [RankedTensorType((1,), it.element_type)]).results[0] for v in values]
    vec = parts[0] if len(parts) == 1 else b.create(
        "stablehlo.concatenate", parts, [RankedTensorType((len(values),), it.element_type)],
        {"dimension": IntegerAttr.get(0)}).results[0]
    return b.create("stablehlo.broadcast_in_dim", [vec], [it],
                    {"broadcast_dimensions": DenseArrayAttr.get(i64, [ivd])}).results[0]


def _gather_localize(b, new, ctx):
    """A slice that takes a split dimension whole takes the local piece whole. Where a looked-up
    dimension is split (a vocabulary-split embedding), each partition clamps the indices as the
    whole gather would, shifts them by its first row, gathers, and zeroes the rows it does not
    hold; the partial results are then summed across partitions."""
    sizes = _ints(new, "slice_sizes")
    global_shape, local_shape = shape_of(ctx.op.operands[0]), shape_of(new.operands[0])
    new.properties["slice_sizes"] = DenseArrayAttr.get(
        i64, [local_shape[d] if s == global_shape[d] else s for d, s in enumerate(sizes)])
    dn = new.properties["dimension_numbers"]
    offsets = [ctx.operand_offset(0, d) for d in dn.start_index_map]
    if all(o is None for o in offsets):
        return None
    indices = new.operands[1]
    it = indices.type
    rank, ivd = len(it.shape), dn.index_vector_dim
    before = b  # the index arithmetic goes after the offsets, then the local gather moves after it
    scalar = RankedTensorType((), it.element_type)

    def const(v) -> Value:
        return before.create("stablehlo.constant", [], [scalar],
                             {"value": DenseElementsAttr.get(np.asarray(v), scalar)}).results[0]

    def cast(v) -> Value:
        return before.create("stablehlo.convert", [v], [scalar]).results[0] if v.type != scalar else v

    def per_position(values) -> Value:
        return _index_vectors(before, it, ivd, values)

    highest = per_position([const(global_shape[d] - sizes[d]) for d in dn.start_index_map])
    clamped = before.create("stablehlo.clamp", [per_position([const(0)] * len(offsets)), indices, highest],
                            [it]).results[0]
    local = before.create("stablehlo.subtract", [clamped, per_position(
        [cast(o) if o is not None else const(0) for o in offsets])], [it]).results[0]
    new.set_operand(1, local)
    bool_t = RankedTensorType(it.shape, i1)
    inside = [before.create("stablehlo.compare", [local, per_position([const(0)] * len(offsets))], [bool_t],
                            {"comparison_direction": enum_attr("comparison_direction", "GE")}).results[0],
              before.create("stablehlo.compare", [local, per_position(
                  [const(local_shape[d] if o is not None else global_shape[d]) for d, o in
                   zip(dn.start_index_map, offsets)])], [bool_t],
                  {"comparison_direction": enum_attr("comparison_direction", "LT")}).results[0]]
    ok = before.create("stablehlo.and", inside, [bool_t]).results[0]
    if ivd < rank:  # every position of the index vector in range
        true = before.create("stablehlo.constant", [], [RankedTensorType((), i1)],
                             {"value": DenseElementsAttr.get(np.asarray(True), RankedTensorType((), i1))}).results[0]
        reduce = Operation.create("stablehlo.reduce", [ok, true],
                                  [RankedTensorType(tuple(n for k, n in enumerate(it.shape) if k != ivd), i1)],
                                  {"dimensions": DenseArrayAttr.get(i64, [ivd])}, regions=1)
        body = reduce.regions[0].add_block(Block([RankedTensorType((), i1)] * 2))
        rb = Builder(InsertionPoint.at_end(body))
        rb.create("stablehlo.return", [rb.create("stablehlo.and", list(body.args), [body.args[0].type]).results[0]])
        ok = before.insert(reduce).results[0]
    new.move_after(ok.owner_op)
    rt = new.results[0].type
    batch = [d for d in range(len(rt.shape)) if d not in dn.offset_dims]
    mask = b.create("stablehlo.broadcast_in_dim", [ok], [RankedTensorType(rt.shape, i1)],
                    {"broadcast_dimensions": DenseArrayAttr.get(i64, batch)}).results[0]
    zero = b.create("stablehlo.broadcast_in_dim", [_zero_scalar(b, new, None, 0)], [rt],
                    {"broadcast_dimensions": DenseArrayAttr.get(i64, [])}).results[0]
    return [b.create("stablehlo.select", [mask, new.results[0], zero], [rt]).results[0]]


def _scatter_sharding(op):
    dn = op.properties["scatter_dimension_numbers"]
    n = (len(op.operands) - 1) // 2
    operand, indices, update = (shape_of(op.operands[0]), shape_of(op.operands[n]), shape_of(op.operands[n + 1]))
    f = Factors()
    blocked = set()
    def own(size):
        blocked.add(f.new(size))
        return len(f.sizes) - 1
    window = [d for d in range(len(operand)) if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
    op_dims: list = []
    upd: list = [None] * len(update)
    for d, size in enumerate(operand):
        k = f.new(size)
        op_dims.append(k)
        if d in window:
            u = dn.update_window_dims[window.index(d)]
            if d not in dn.scatter_dims_to_operand_dims and update[u] == size:
                upd[u] = k
                continue
        elif d in dn.inserted_window_dims and d in dn.scatter_dims_to_operand_dims:
            continue  # rows written one at a time: each partition writes the rows it holds
        blocked.add(k)
    upd = [own(update[d]) if k is None else k for d, k in enumerate(upd)]
    return f.rule([op_dims] * n + [[own(s) for s in indices]] + [upd] * n, [op_dims] * n, need_replication=blocked,
                  localize=_scatter_localize)


def _scatter_localize(b, new, ctx):
    """Where the rows written one at a time are split, each partition shifts the indices by its
    first row: an update for a row it does not hold falls out of its bounds and is skipped (as
    the whole scatter skips windows out of bounds; one out of the whole tensor may land in the
    padding of the last shard, which nothing reads)."""
    dn = new.properties["scatter_dimension_numbers"]
    n = (len(new.operands) - 1) // 2
    offsets = [ctx.operand_offset(0, d) for d in dn.scatter_dims_to_operand_dims]
    if all(o is None for o in offsets):
        return None
    indices = new.operands[n]
    it = indices.type
    scalar = RankedTensorType((), it.element_type)
    zero = b.create("stablehlo.constant", [], [scalar], {"value": DenseElementsAttr.get(np.zeros(()), scalar)})
    starts = [b.create("stablehlo.convert", [o], [scalar]).results[0] if o is not None else zero.results[0]
              for o in offsets]
    shift = _index_vectors(b, it, dn.index_vector_dim, starts)
    local = b.create("stablehlo.subtract", [indices, shift], [it]).results[0]
    new.set_operand(n, local)
    new.move_after(local.owner_op)
    return None


register(SHARDING_RULES, "stablehlo.gather", _gather_sharding)
register(SHARDING_RULES, "stablehlo.scatter", _scatter_sharding)
declare(["stablehlo.dynamic_gather", "stablehlo.torch_index_select"],
        unsupported("forms loom's front end does not emit: run replicated"), tables=("sharding",))
