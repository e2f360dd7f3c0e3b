"""Collectives over named mesh axes inside `loom.shard_map`, with `jax.lax`'s names and behaviour:
`psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`, `ppermute`, `all_to_all`,
`axis_index`, and `pvary` / `pcast(..., to="varying")`, which mark a value as varying over mesh
axes (for shard_map's check_vma; no op: each device's copy is already its own).

Each lowers as JAX lowers it: to a StableHLO collective whose `replica_groups` list, per
combination of the mesh axes not named, the partition ids along the named axes (partition p is
the p-th device of the mesh in row-major order), with JAX's `channel_handle` and
`use_global_device_ids`; `axis_index` is `partition_id` arithmetic. Arguments may be pytrees
(each leaf gets its own collective), and an axis name may be a tuple of names (their product).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo.collectives import channel_handle_attr
from loom.frontend.pytree import tree_map
from loom.frontend.shard_map import current_mesh, mark_varying
from loom.frontend.tracing import Tracer, current_trace, lift, user_line
from loom.ir.attributes import DenseElementsAttr, IntegerAttr, UnitAttr
from loom.ir.types import IntegerType, RankedTensorType, i64
from loom.ops.collectives import axis_groups, build_collective
from loom.sharding import Mesh

# JAX writes this channel on every collective of a shard_map body (a cross-partition channel).
CHANNEL_HANDLE = channel_handle_attr(1)


def _axes(axis_name: str | Sequence[str], what: str) -> tuple[Mesh, tuple[str, ...]]:
    """The mesh of the enclosing shard_map and the named axes, checked."""
    mesh = current_mesh()
    if mesh is None:
        raise NameError(f"{what}: unbound axis name {axis_name!r} (at {user_line()}); collectives run inside "
                        "loom.shard_map, whose mesh names the axes")
    names = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    for a in names:
        if a not in mesh.shape:
            raise NameError(f"{what}: unbound axis name {a!r} (at {user_line()}); the mesh has axes "
                            f"{mesh.axis_names}")
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: axis names {names} repeat an axis (at {user_line()})")
    return mesh, names


def _groups(axis_name: str | Sequence[str], what: str) -> tuple[tuple[str, ...], np.ndarray, int]:
    """The named axes, the partition-id groups along them (one row per group) and the group size."""
    mesh, names = _axes(axis_name, what)
    groups = axis_groups(mesh.to_sdy(), names)
    return names, groups, groups.shape[1]


def _groups_attr(groups: np.ndarray) -> DenseElementsAttr:
    return DenseElementsAttr.get(groups.astype(np.int64), RankedTensorType(groups.shape, i64, None))


def _tracer(x: Any, what: str) -> Tracer:
    trace = current_trace()
    if trace is None:
        raise NameError(f"{what}: collectives run inside loom.shard_map (at {user_line()})")
    return lift(trace, x)


def _collective(name: str, x: Tracer, result_shape: Sequence[int], props: dict[str, Any],
                reducer: str | None = None) -> Tracer:
    """One collective op on `x` (with a reduction region applying `reducer` when given)."""
    return Tracer(build_collective(x.trace.emit(), name, x.value, result_shape, props, reducer), x.trace, x.weak)


def _group_props(groups: np.ndarray) -> dict[str, Any]:
    return {"channel_handle": CHANNEL_HANDLE, "replica_groups": _groups_attr(groups),
            "use_global_device_ids": UnitAttr()}


def _all_reduce(x: Any, axis_name: Any, reducer: str, what: str) -> Any:
    names, groups, _ = _groups(axis_name, what)

    def one(leaf: Any) -> Tracer:
        t = _tracer(leaf, what)
        if t.dtype == np.bool_:
            raise TypeError(f"{what} of a boolean array (at {user_line()}); convert it to a number first")
        return _collective("stablehlo.all_reduce", t, t.shape, _group_props(groups), reducer)
    return tree_map(one, x)


def psum(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The sum of `x` over the devices along `axis_name` (every device gets the sum)."""
    return _all_reduce(x, axis_name, "stablehlo.add", "psum")


def pmax(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The elementwise maximum of `x` over the devices along `axis_name`."""
    return _all_reduce(x, axis_name, "stablehlo.maximum", "pmax")


def pmin(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The elementwise minimum of `x` over the devices along `axis_name`."""
    return _all_reduce(x, axis_name, "stablehlo.minimum", "pmin")


def pmean(x: Any, axis_name: str | Sequence[str]) -> Any:
    """The mean of `x` over the devices along `axis_name` (`psum` divided by their number)."""
    mesh, names = _axes(axis_name, "pmean")
    n = math.prod(mesh.shape[a] for a in names)
    return tree_map(lambda s: s / n, psum(x, axis_name))


def _axis(axis: int, ndim: int, what: str, name: str = "axis") -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: {name}={axis} is out of range for an array of rank {ndim} (at {user_line()})")
    return axis % ndim


def all_gather(x: Any, axis_name: str | Sequence[str], *, axis: int = 0, tiled: bool = False) -> Any:
    """The values of `x` of every device along `axis_name`, stacked along a new axis `axis` (or
    concatenated along `axis` when `tiled`), on every device."""
    names, groups, n = _groups(axis_name, "all_gather")

    def one(leaf: Any) -> Tracer:
        t = _tracer(leaf, "all_gather")
        if not tiled:
            d = _axis(axis, t.ndim + 1, "all_gather")
            shape = (*t.shape[:d], 1, *t.shape[d:])
            dims = [i for i in range(len(shape)) if i != d]
            t = Tracer(stablehlo.broadcast_in_dim(t.trace.emit(), t.value, shape, dims), t.trace, t.weak)
        else:
            d = _axis(axis, t.ndim, "all_gather")
        shape = list(t.shape)
        shape[d] *= n
        props = {"all_gather_dim": IntegerAttr(i64, d), **_group_props(groups)}
        return _collective("stablehlo.all_gather", t, shape, props)
    return tree_map(one, x)


def psum_scatter(x: Any, axis_name: str | Sequence[str], *, scatter_dimension: int = 0,
                 tiled: bool = False) -> Any:
    """The sum of `x` over the devices along `axis_name`, split along `scatter_dimension`: device i
    gets block i (when not `tiled`, the dimension's size is the number of devices and is
    removed)."""
    names, groups, n = _groups(axis_name, "psum_scatter")

    def one(leaf: Any) -> Tracer:
        t = _tracer(leaf, "psum_scatter")
        d = _axis(scatter_dimension, t.ndim, "psum_scatter", "scatter_dimension")
        size = t.shape[d]
        if (size % n if tiled else size != n):
            need = f"a multiple of {n}" if tiled else f"{n}"
            raise ValueError(f"psum_scatter: dimension {d} of the operand has size {size}, which must be {need} "
                             f"(the size of axes {names}) (at {user_line()})")
        shape = list(t.shape)
        shape[d] = size // n
        props = {**_group_props(groups), "scatter_dimension": IntegerAttr(i64, d)}
        out = _collective("stablehlo.reduce_scatter", t, shape, props, "stablehlo.add")
        if not tiled:
            del shape[d]
            out = Tracer(stablehlo.reshape(out.trace.emit(), out.value, shape), out.trace, out.weak)
        return out
    return tree_map(one, x)


def ppermute(x: Any, axis_name: str | Sequence[str], perm: Sequence[tuple[int, int]]) -> Any:
    """`x` sent from device `source` to device `target` along `axis_name` for each pair of `perm`
    (indices along the axes); devices no pair targets get zeros."""
    names, groups, n = _groups(axis_name, "ppermute")
    perm = [(int(s), int(t)) for s, t in perm]
    for s, t in perm:
        if not (0 <= s < n and 0 <= t < n):
            raise ValueError(f"ppermute: pair {(s, t)} is out of range for axes {names} of size {n} "
                             f"(at {user_line()})")
    if len({s for s, _ in perm}) != len(perm) or len({t for _, t in perm}) != len(perm):
        raise ValueError(f"ppermute: perm {perm} sends from or to one index twice (at {user_line()})")
    pairs = np.array([(g[s], g[t]) for g in groups for s, t in perm], np.int64).reshape(-1, 2)

    def one(leaf: Any) -> Tracer:
        t = _tracer(leaf, "ppermute")
        props = {"channel_handle": CHANNEL_HANDLE, "source_target_pairs": _groups_attr(pairs)}
        return _collective("stablehlo.collective_permute", t, t.shape, props)
    return tree_map(one, x)


def all_to_all(x: Any, axis_name: str | Sequence[str], split_axis: int, concat_axis: int, *,
               tiled: bool = False) -> Any:
    """`x` split into as many blocks along `split_axis` as there are devices along `axis_name`,
    block j sent to device j, the received blocks concatenated along `concat_axis` (when not
    `tiled`, `split_axis` has the size of the axes and is removed, and the blocks are stacked
    along a new axis `concat_axis`)."""
    names, groups, n = _groups(axis_name, "all_to_all")

    def one(leaf: Any) -> Tracer:
        t = _tracer(leaf, "all_to_all")
        s = _axis(split_axis, t.ndim, "all_to_all", "split_axis")
        c = _axis(concat_axis, t.ndim, "all_to_all", "concat_axis")
        if t.shape[s] % n if tiled else t.shape[s] != n:
            need = f"a multiple of {n}" if tiled else f"{n}"
            raise ValueError(f"all_to_all: split_axis {s} has size {t.shape[s]}, which must be {need} (the size of "
                             f"axes {names}) (at {user_line()})")
        if not tiled:  # as JAX: a size-1 axis to concatenate along, the split axis squeezed after
            e = c if c <= s else c + 1
            shape = [*t.shape[:e], 1, *t.shape[e:]]
            t = Tracer(stablehlo.reshape(t.trace.emit(), t.value, shape), t.trace, t.weak)
            s, c = (s + 1 if e <= s else s), e
        shape = list(t.shape)
        shape[s] //= n
        shape[c] *= n
        props = {"channel_handle": CHANNEL_HANDLE, "concat_dimension": IntegerAttr(i64, c),
                 "replica_groups": _groups_attr(groups), "split_count": IntegerAttr(i64, n),
                 "split_dimension": IntegerAttr(i64, s)}
        out = _collective("stablehlo.all_to_all", t, shape, props)
        if not tiled:
            del shape[s]
            out = Tracer(stablehlo.reshape(out.trace.emit(), out.value, shape), out.trace, out.weak)
        return out
    return tree_map(one, x)


def _partition_id_index(trace: Any, mesh: Mesh, axis: str) -> Tracer:
    """The index of this device along `axis`: (partition_id / stride) % size, as int32."""
    b = trace.emit()
    u32 = IntegerType(32, "u")
    i = mesh.axis_names.index(axis)
    stride = math.prod(mesh.axis_sizes[i + 1:])
    c_stride = trace.constant(np.asarray(stride, np.uint32))
    c_size = trace.constant(np.asarray(mesh.axis_sizes[i], np.uint32))
    pid = b.create("stablehlo.partition_id", [], [RankedTensorType((), u32, None)]).results[0]
    v = stablehlo.divide(b, pid, c_stride)
    v = stablehlo.remainder(b, v, c_size)
    return Tracer(stablehlo.convert(b, v, IntegerType(32)), trace)


def axis_index(axis_name: str | Sequence[str]) -> Tracer:
    """This device's index along `axis_name` (an int32 scalar; for several axes, the index in
    their product, major to minor)."""
    mesh, names = _axes(axis_name, "axis_index")
    trace = current_trace()
    if len(names) == 1:
        return _partition_id_index(trace, mesh, names[0])
    total: Tracer | None = None
    stride = 1
    for a in reversed(names):  # as JAX: the minor axis first, 0 + index * stride summed
        term = _partition_id_index(trace, mesh, a) * np.int32(stride)
        total = (np.int32(0) + term) if total is None else total + term
        stride *= mesh.shape[a]
    return total


def pvary(x: Any, axis_name: str | Sequence[str]) -> Any:
    """`x` typed as varying over the mesh axes `axis_name` (as `jax.lax.pcast(x, axis_name,
    to="varying")`): the same values, which the body may then treat as per-device ones (a loop
    carry that becomes varying, a conditional's branch, an output whose spec names the axes)."""
    _, names = _axes(axis_name, "pvary")

    def one(leaf: Any) -> Tracer:
        t = _tracer(leaf, "pvary")
        mark_varying(t, names)
        return t
    return tree_map(one, x)


def pcast(x: Any, axis_name: str | Sequence[str], *, to: str) -> Any:
    """`jax.lax.pcast`: with `to="varying"`, `pvary` (the other targets, "reduced" and
    "unreduced", type sharded reductions loom does not model)."""
    if to != "varying":
        raise NotImplementedError(f'pcast(..., to={to!r}): loom types only to="varying" (at {user_line()})')
    return pvary(x, axis_name)


__all__ = ["all_gather", "all_to_all", "axis_index", "pcast", "pmax", "pmean", "pmin", "ppermute",
           "psum", "psum_scatter", "pvary"]
