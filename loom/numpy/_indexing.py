"""NumPy indexing of traced arrays (`x[idx]`: basic and advanced, lowered to slices and
`stablehlo.gather`), functional updates `x.at[idx].set(v)` (scatters), `take`, `take_along_axis`,
`put_along_axis`.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import GatherDimensionNumbers, ScatterDimensionNumbers
from loom.frontend.tracing import (
    ConcretizationError,
    TraceContext,
    Tracer,
    is_floating,
    user_line,
)
from loom.frontend.tracing import broadcast_shapes as _broadcast_shapes
from loom.frontend.tracing import broadcast_to_shape as _broadcast
from loom.frontend.tracing import lift as _lift
from loom.frontend.tracing import trace_of as _trace_of
from loom.lax.ops import out_of_bounds_fill
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import ArrayLike, AxisError, as_tracer, canonical_axes, is_traced, lift_all
from loom.transforms.rule_builders import clamp_starts as _clamp_starts
from loom.transforms.rule_builders import in_bounds as _in_bounds


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = False, mode: str | None = None) -> Any:
    """`arr` with `values` put at `indices` along `axis` (the other axes matched), returned as a new
    array as JAX does (`inplace=True` is an error, as in JAX; NumPy modifies `arr` instead)."""
    if inplace:
        raise ValueError(f"put_along_axis: inplace=True is not supported; arrays are immutable, pass "
                         f"inplace=False and use the result (at {user_line()})")
    if not is_traced(arr, indices, values):
        out = np.array(arr)
        np.put_along_axis(out, np.asarray(indices), values, axis)
        return out
    arr, indices = lift_all([arr, indices])
    if axis is None:
        return lax_numpy.reshape(
            put_along_axis(
                lax_numpy.ravel(arr),
                lax_numpy.ravel(indices),
                lax_numpy.ravel(as_tracer(values, arr)) if np.ndim(values) else values,
                0,
                mode=mode,
            ),
            arr.shape,
        )
    ax = canonical_axes(axis, arr.ndim)[0]
    if indices.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: `indices` must have the rank of `arr` ({arr.ndim}), got shape "
                         f"{indices.shape} (at {user_line()})")
    index = []
    for i in range(arr.ndim):
        if i == ax:
            index.append(indices)
        else:
            index.append(np.arange(arr.shape[i]).reshape([-1 if j == i else 1 for j in range(arr.ndim)]))
    return arr.at[tuple(index)].set(values, mode=mode)


_INDEX_DTYPE = np.dtype(np.int32)


class IndexDtypeError(IndexError, TypeError, ValueError):
    """An index array that is not of an integer (or boolean) dtype: an IndexError as NumPy's, and
    the TypeError of JAX's indexing (`x[i]` under jit) and ValueError of its `take`."""


def _is_array_index(i: Any) -> bool:
    if isinstance(i, Tracer):
        return True
    if isinstance(i, (list, tuple, np.ndarray)):
        return True
    return isinstance(i, (bool, np.bool_))


def _check_index_entry(i: Any) -> None:
    if i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)) or _is_array_index(i):
        if isinstance(i, Tracer) and i.dtype.kind not in "iub":
            raise IndexDtypeError(f"indices must be integers or booleans, got a traced array of dtype {i.dtype} "
                             f"(at {user_line()})")
        return
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer or boolean arrays are valid "
                     f"indices, got {type(i).__name__} (at {user_line()})")


def _normalize(x_ndim: int, index: Any) -> list[Any]:
    """The index as a list of entries (None, slice, int, or an index array: numpy or Tracer), with
    the Ellipsis expanded and static boolean masks replaced by their integer index arrays."""
    if not isinstance(index, tuple):
        index = (index,)
    entries: list[Any] = []
    for i in index:
        _check_index_entry(i)
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise ConcretizationError(f"a traced boolean mask has a data-dependent number of selected elements, so it "
                                      f"cannot index inside loom.jit (at {user_line()}); use lnp.where(mask, x, other) "
                                      "instead")
        if isinstance(i, (bool, np.bool_)):
            raise ConcretizationError(f"a scalar boolean index is not supported inside loom.jit (at {user_line()})")
        if isinstance(i, (list, tuple)):
            i = _static_list(i)
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            entries.extend(np.nonzero(i)) if i.ndim else entries.append(i)
            if i.ndim == 0:
                raise ConcretizationError(f"a 0-d boolean index is not supported inside loom.jit (at {user_line()})")
            continue
        if isinstance(i, np.ndarray) and i.dtype.kind not in "iu":
            raise IndexError(f"index arrays must be integers or booleans, got dtype {i.dtype} (at {user_line()})")
        entries.append(i)
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...') (at {user_line()})")
    n_real = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if n_real > x_ndim:
        raise IndexError(f"too many indices ({n_real}) for an array of rank {x_ndim} (at {user_line()})")
    fill = [slice(None)] * (x_ndim - n_real)
    k = next((j for j, e in enumerate(entries) if e is Ellipsis), None)
    if k is not None:
        entries = entries[:k] + fill + entries[k + 1:]
    else:
        entries = entries + fill
    return entries


def _static_list(i: list | tuple) -> Any:
    """A list index as a numpy array; a list holding tracers is stacked into one."""
    if _trace_of(i) is not None:
        return lax_numpy.stack(list(i))
    arr = np.asarray(i)
    if arr.size == 0:
        arr = arr.astype(np.int32)
    return arr


def _basic(x: Tracer, entries: list[Any]) -> Tracer:
    starts, limits, strides, out_shape, reversed_dims = [], [], [], [], []
    dim = 0
    for i in entries:
        if i is None:
            out_shape.append(1)
            continue
        size = x.shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            n = len(range(start, stop, step))
            if step < 0:  # reverse the axis, then slice forwards
                reversed_dims.append(dim)
                start, step = size - 1 - start, -step
            starts.append(start)
            limits.append(start + max(0, (n - 1) * step + 1) if n else start)
            strides.append(step)
            out_shape.append(n)
        else:
            j = int(i)
            if not -size <= j < size:
                raise IndexError(f"index {j} is out of bounds for axis {dim} with size {size} (at {user_line()})")
            j %= size
            starts.append(j)
            limits.append(j + 1)
            strides.append(1)
        dim += 1
    b = x.trace.emit()
    v = x.value
    if reversed_dims:
        v = stablehlo.reverse(b, v, reversed_dims)
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        v = stablehlo.slice_(b, v, starts, limits, strides)
    if tuple(out_shape) != tuple(v.type.shape):
        v = stablehlo.reshape(b, v, out_shape)
    return Tracer(v, x.trace, x.weak)


@dataclass
class _Plan:
    """How an advanced index maps to one gather / scatter.

    `indices` has shape `batch + (len(index_map),)`: `batch` is the broadcast shape of the index
    arrays followed by one axis per strided slice; `index_map` names the operand dimension of each
    index vector component. `collapsed` are the operand dims indexed by one element (arrays,
    integers, strided slices); `slice_sizes` the window size per operand dim. The gather result is
    `batch + windows`; `perm` reorders it into NumPy's order and `out_shape` adds the None axes."""

    indices: Tracer
    index_map: tuple[int, ...]
    collapsed: tuple[int, ...]
    slice_sizes: tuple[int, ...]
    gather_shape: tuple[int, ...]
    perm: tuple[int, ...]
    out_shape: tuple[int, ...]

    def gather_dimension_numbers(self) -> GatherDimensionNumbers:
        n_batch = len(self.gather_shape) - (len(self.slice_sizes) - len(self.collapsed))
        return GatherDimensionNumbers.get(
            offset_dims=tuple(range(n_batch, len(self.gather_shape))), collapsed_slice_dims=self.collapsed,
            start_index_map=self.index_map, index_vector_dim=n_batch)

    def scatter_dimension_numbers(self) -> ScatterDimensionNumbers:
        n_batch = len(self.gather_shape) - (len(self.slice_sizes) - len(self.collapsed))
        return ScatterDimensionNumbers.get(
            update_window_dims=tuple(range(n_batch, len(self.gather_shape))), inserted_window_dims=self.collapsed,
            scatter_dims_to_operand_dims=self.index_map, index_vector_dim=n_batch)


def _as_index_tracer(trace: TraceContext, i: Any, size: int, dim: int) -> Tracer:
    """An index array (numpy or traced) as an int32 tracer with negative indices wrapped once."""
    if isinstance(i, Tracer):
        t = i if i.dtype == _INDEX_DTYPE else lax_numpy.astype(i, _INDEX_DTYPE)
        if i.dtype.kind == "u":
            return t
        return lax_numpy.where(ufuncs.less(t, 0), ufuncs.add(t, np.int32(size)), t)
    arr = np.asarray(i)
    arr = np.where(arr < 0, arr + size, arr).astype(_INDEX_DTYPE)
    return _lift(trace, arr)


def _plan(x: Tracer, entries: list[Any]) -> _Plan:
    trace = x.trace
    advanced = [k for k, e in enumerate(entries)
                if isinstance(e, (np.ndarray, Tracer)) or (isinstance(e, (int, np.integer)))]
    # numpy: the advanced indices' dims go where they stand when they are contiguous, else first
    contiguous = advanced == list(range(advanced[0], advanced[-1] + 1)) if advanced else True
    arrays, array_dims, slices = [], [], []
    dim = 0
    for k, e in enumerate(entries):
        if e is None:
            continue
        if k in advanced:
            arrays.append(_as_index_tracer(trace, e, x.shape[dim], dim))
            array_dims.append(dim)
        else:
            start, stop, step = e.indices(x.shape[dim])
            slices.append((k, dim, start, len(range(start, stop, step)), step))
        dim += 1
    bshape = _broadcast_shapes(*(a.shape for a in arrays))
    strided = [s for s in slices if s[4] != 1]
    windows = [s for s in slices if s[4] == 1]
    batch = (*bshape, *(s[3] for s in strided))
    # index vector components: the arrays, the strided slices (aranges), windows with a nonzero start
    parts = []
    for a in arrays:
        a = lax_numpy.reshape(a, (*a.shape[:0], *[1] * (len(bshape) - a.ndim), *a.shape))
        a = _broadcast(a, (*bshape,))
        parts.append(lax_numpy.reshape(a, (*bshape, *[1] * len(strided), 1)))
    for j, (_, _d, start, n, step) in enumerate(strided):
        ar = np.asarray(start + step * np.arange(n), dtype=_INDEX_DTYPE)
        shape = [1] * len(batch)
        shape[len(bshape) + j] = n
        parts.append(Tracer(trace.constant(ar.reshape((*shape, 1))), trace))
    nonzero_windows = [w for w in windows if w[2] != 0]
    for _, _d, start, _n, _ in nonzero_windows:
        parts.append(Tracer(trace.constant(np.full((*[1] * len(batch), 1), start, _INDEX_DTYPE)), trace))
    parts = [_broadcast(p, (*batch, 1)) for p in parts]
    if parts:
        indices = parts[0] if len(parts) == 1 else lax_numpy.concatenate(parts, axis=len(batch))
    else:
        indices = Tracer(trace.constant(np.zeros((*batch, 0), _INDEX_DTYPE)), trace)
    index_map = (*array_dims, *(s[1] for s in strided), *(w[1] for w in nonzero_windows))
    collapsed = tuple(sorted((*array_dims, *(s[1] for s in strided))))
    sizes = [1] * x.ndim
    for _, d, _, n, _ in windows:
        sizes[d] = n
    gather_shape = (*batch, *(w[3] for w in windows))
    # positions in the gather result: array block, strided slices, windows (in operand order)
    n_b = len(bshape)
    slot_of_slice = {}
    for j, s in enumerate(strided):
        slot_of_slice[s[0]] = n_b + j
    for j, w in enumerate(windows):
        slot_of_slice[w[0]] = len(batch) + j
    order: list[int] = []
    placed = False
    if not contiguous:
        order.extend(range(n_b))
        placed = True
    out_shape = []
    for k, e in enumerate(entries):
        if e is None:
            out_shape.append(1)
        elif k in advanced:
            if not placed:
                order.extend(range(n_b))
                out_shape.extend(bshape)
                placed = True
        else:
            order.append(slot_of_slice[k])
            out_shape.append(gather_shape[slot_of_slice[k]])
    if not contiguous:
        out_shape = [*bshape, *out_shape]
    if not placed:
        order.extend(range(n_b))
    return _Plan(indices, tuple(index_map), collapsed, tuple(sizes), gather_shape, tuple(order), tuple(out_shape))


def _has_advanced(entries: list[Any]) -> bool:
    return any(isinstance(e, (np.ndarray, Tracer)) for e in entries)


def _check_mode(mode: str | None, allowed: tuple[str, ...]) -> str | None:
    if mode is not None and mode not in allowed:
        raise ValueError(f"invalid index mode {mode!r}; expected one of {', '.join(allowed)} (at {user_line()})")
    return mode


def getitem(x: Tracer, index: Any, mode: str | None = None, fill_value: Any = None) -> Tracer:
    """`x[index]` with NumPy's semantics: basic indexing lowers to slices and reshapes, advanced
    indexing to one `stablehlo.gather`. Out-of-bounds indices are clamped (as JAX; mode None,
    'clip' or 'promise_in_bounds'), or with mode 'fill' read `fill_value` (NaN for floats)."""
    _check_mode(mode, ("clip", "fill", "promise_in_bounds", "drop"))
    entries = _normalize(x.ndim, index)
    if not _has_advanced(entries):
        return _basic(x, entries)
    plan = _plan(x, entries)
    b = x.trace.emit()
    v = stablehlo.gather(b, x.value, plan.indices.value, plan.gather_dimension_numbers(), plan.slice_sizes)
    out = Tracer(v, x.trace, x.weak)
    if mode in ("fill", "drop"):
        n_batch = plan.indices.ndim - 1
        ok = _in_bounds(b, plan.indices.value, plan.index_map, n_batch, x.shape, plan.slice_sizes)
        mask = stablehlo.broadcast_in_dim(x.trace.emit(), ok, plan.gather_shape, list(range(n_batch)))
        fill = out_of_bounds_fill(x.dtype) if fill_value is None else fill_value
        out = lax_numpy.where(Tracer(mask, x.trace), out, _lift(x.trace, np.asarray(fill, x.dtype)))
    out = lax_numpy.transpose(out, plan.perm)
    return lax_numpy.reshape(out, plan.out_shape)


def _scatter(x: Tracer, index: Any, values: Any, combine: Callable | None, name: str, mode: str | None = None,
             indices_are_sorted: bool = False, unique_indices: bool = False) -> Tracer:
    _check_mode(mode, ("clip", "drop", "fill", "promise_in_bounds"))
    trace = _trace_of(x, values, index if isinstance(index, (Tracer, list, tuple)) else None) or x.trace
    entries = _normalize(x.ndim, index)
    if not _has_advanced(entries):
        # basic indices (ints, slices) name each element once: the scatter's indices are unique
        unique_indices = True
        # a plain int becomes a 0-d index array so one scatter does it all
        entries = [np.asarray(e, _INDEX_DTYPE) if isinstance(e, (int, np.integer)) else e for e in entries]
    plan = _plan(x, entries)
    vals = _lift(trace, values, x.dtype, x.weak)
    try:
        vals = lax_numpy.broadcast_to(vals, plan.out_shape)
    except ValueError:
        raise ValueError(f"x.at[...].{name}: values of shape {vals.shape} cannot be broadcast to the indexed shape "
                         f"{plan.out_shape} (at {user_line()})") from None
    # back to the gather order: drop the None axes, then undo the permutation
    vals = lax_numpy.reshape(vals, tuple(plan.gather_shape[p] for p in plan.perm))
    vals = lax_numpy.transpose(vals, tuple(int(i) for i in np.argsort(plan.perm)))

    def body(bb: Any, args: list) -> list:
        return [args[1] if combine is None else combine(bb, args[0], args[1])]
    indices = plan.indices.value
    if mode == "clip":  # clamp the windows into bounds instead of dropping them
        indices = _clamp_starts(trace.emit(), indices, plan.index_map, plan.indices.ndim - 1, x.shape,
                                plan.slice_sizes)
    b = trace.emit()
    v = stablehlo.scatter(b, [x.value], indices, [vals.value], plan.scatter_dimension_numbers(), body,
                          indices_are_sorted, unique_indices)
    return Tracer(v, trace, x.weak)


class _IndexUpdateRef:
    """`x.at[idx]`: the functional update methods of one index."""

    def __init__(self, x: Tracer, index: Any) -> None:
        self.x = x
        self.index = index

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None,
            fill_value: Any = None) -> Tracer:
        """`x[idx]`; with `mode='fill'` out-of-bounds indices read `fill_value` (NaN for floats)."""
        return getitem(self.x, self.index, mode, fill_value)

    def _update(self, values: Any, combine: Callable | None, name: str, kwargs: dict) -> Tracer:
        unknown = set(kwargs) - {"indices_are_sorted", "unique_indices", "mode"}
        if unknown:
            raise TypeError(f"x.at[...].{name} got unexpected keyword arguments {sorted(unknown)}")
        return _scatter(self.x, self.index, values, combine, name, kwargs.get("mode"),
                        bool(kwargs.get("indices_are_sorted", False)), bool(kwargs.get("unique_indices", False)))

    def set(self, values: Any, **kwargs: Any) -> Tracer:
        """`x` with `x[idx] = values` (for repeated indices, one of the values wins). Keywords as
        JAX: `mode` ('drop' by default: out-of-bounds updates are dropped; 'clip' clamps them),
        `indices_are_sorted`, `unique_indices`; likewise for the other updates."""
        return self._update(values, None, "set", kwargs)

    def add(self, values: Any, **kwargs: Any) -> Tracer:
        """`x` with `x[idx] += values` (repeated indices accumulate)."""
        return self._update(values, stablehlo.add, "add", kwargs)

    def multiply(self, values: Any, **kwargs: Any) -> Tracer:
        """`x` with `x[idx] *= values` (repeated indices accumulate)."""
        return self._update(values, _mul_or_and(self.x), "multiply", kwargs)

    mul = multiply

    def min(self, values: Any, **kwargs: Any) -> Tracer:  # noqa: A003 - JAX's name
        """`x` with `x[idx] = minimum(x[idx], values)`."""
        return self._update(values, stablehlo.minimum, "min", kwargs)

    def max(self, values: Any, **kwargs: Any) -> Tracer:  # noqa: A003 - JAX's name
        """`x` with `x[idx] = maximum(x[idx], values)`."""
        return self._update(values, stablehlo.maximum, "max", kwargs)

    def divide(self, values: Any, **kwargs: Any) -> Tracer:
        """`x` with `x[idx] /= values`, as JAX: `x` divided by a scatter-multiply of the divisors
        into ones."""
        if not is_floating(self.x.dtype):
            raise TypeError(f"x.at[...].divide needs a floating-point array, got {self.x.dtype} (at {user_line()})")
        ref = _IndexUpdateRef(lax_numpy.ones_like(self.x), self.index)
        return ufuncs.divide(self.x, ref._update(values, stablehlo.multiply, "divide", kwargs))

    def power(self, values: Any, **kwargs: Any) -> Tracer:
        """`x` with `x[idx] **= values`, as JAX: `x` to the power of a scatter of the exponents
        into ones."""
        ref = _IndexUpdateRef(lax_numpy.ones_like(self.x), self.index)
        return ufuncs.power(self.x, ref._update(values, stablehlo.multiply, "power", kwargs))


def _mul_or_and(x: Tracer) -> Callable:
    return stablehlo.and_ if x.dtype == np.bool_ else stablehlo.multiply


class _IndexHelper:
    """`x.at`: index it to get the update methods."""

    def __init__(self, x: Tracer) -> None:
        self.x = x

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, index)


def at(x: Tracer) -> _IndexHelper:
    """`x.at`, as JAX: `x.at[idx].set(v)`, `.add`, `.multiply` / `.mul`, `.min`, `.max`,
    `.divide`, `.power` and `.get()` return new arrays."""
    return _IndexHelper(x)


def _index_operand(trace: TraceContext, indices: Any) -> Tracer:
    t = _lift(trace, indices if isinstance(indices, Tracer) else np.asarray(indices))
    if t.dtype.kind not in "iu":
        raise IndexDtypeError(f"indices must be integers, got dtype {t.dtype} (at {user_line()})")
    return t if t.dtype == _INDEX_DTYPE else lax_numpy.astype(t, _INDEX_DTYPE)


def _with_mode(trace: TraceContext, a: Tracer, idx: Tracer, n: int, mode: str | None, wrap_negative: bool,
               read: Callable[[Tracer], Tracer], mask_shape: Callable[[Tracer], Tracer],
               fill_value: Any) -> Tracer:
    """`read(indices)` with JAX's index modes: 'fill' (the default: out-of-bounds give
    `fill_value`), 'clip' / 'promise_in_bounds' (clamped) or 'wrap' (modulo the size)."""
    mode = "fill" if mode is None else mode
    if mode == "wrap":
        return read(ufuncs.remainder(idx, np.int32(n)) if n else idx)
    if mode in ("clip", "promise_in_bounds"):
        if wrap_negative:
            idx = lax_numpy.where(ufuncs.less(idx, 0), ufuncs.add(idx, np.int32(n)), idx)
        return read(ufuncs.clip(idx, np.int32(0), np.int32(max(n - 1, 0))))
    if mode != "fill":
        raise ValueError(f"invalid index mode {mode!r}; expected 'fill', 'clip', 'wrap' or 'promise_in_bounds' "
                         f"(at {user_line()})")
    valid = ufuncs.logical_and(ufuncs.greater_equal(idx, np.int32(-n)), ufuncs.less(idx, np.int32(n)))
    out = read(idx)
    fill = out_of_bounds_fill(a.dtype) if fill_value is None else fill_value
    return lax_numpy.where(mask_shape(valid), out, _lift(trace, np.asarray(fill, a.dtype)))


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None, fill_value: Any = None) -> Any:
    """Elements of `a` at `indices` along `axis` (of the flattened array when None), as
    `jax.numpy.take`: out-of-bounds indices give `fill_value` (NaN for floats) by default, or are
    clamped (`mode='clip'`) or wrapped (`mode='wrap'`)."""
    trace = _trace_of(a, indices)
    if trace is None:
        return np.take(a, indices, axis=axis, mode="raise" if mode in (None, "fill") else mode)
    a = _lift(trace, a)
    if axis is None:
        a, axis = lax_numpy.reshape(a, (-1,)), 0
    if not -a.ndim <= axis < a.ndim:
        raise AxisError(f"take: axis {axis} is out of bounds for an array of rank {a.ndim} (at {user_line()})")
    ax = axis % a.ndim
    idx = _index_operand(trace, indices)
    n = a.shape[ax]

    def read(i: Tracer) -> Tracer:
        return getitem(a, (*[slice(None)] * ax, i))

    def mask_shape(valid: Tracer) -> Tracer:
        return lax_numpy.reshape(valid, (*[1] * ax, *valid.shape, *[1] * (a.ndim - ax - 1)))

    return _with_mode(trace, a, idx, n, mode, False, read, mask_shape, fill_value)


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Any:
    """Elements of `arr` at `indices` along `axis`, the other axes matched (broadcast) between
    `arr` and `indices`, as `jax.numpy.take_along_axis` (index modes as `take`)."""
    trace = _trace_of(arr, indices)
    if trace is None:
        return np.take_along_axis(np.asarray(arr), np.asarray(indices), axis)
    a = _lift(trace, arr)
    idx = _index_operand(trace, indices)
    if axis is None:
        a, idx, axis = lax_numpy.reshape(a, (-1,)), lax_numpy.reshape(idx, (-1,)), 0
    if idx.ndim != a.ndim:
        raise ValueError(f"take_along_axis: indices and arr must have the same number of dimensions, got shapes "
                         f"{idx.shape} and {a.shape} (at {user_line()})")
    if not -a.ndim <= axis < a.ndim:
        raise AxisError(f"take_along_axis: axis {axis} is out of bounds for an array of rank {a.ndim} "
                         f"(at {user_line()})")
    ax = axis % a.ndim
    for d in range(a.ndim):
        if d != ax:
            _broadcast_shapes((a.shape[d],), (idx.shape[d],))

    def read(i: Tracer) -> Tracer:
        entries: list[Any] = []
        for d in range(a.ndim):
            if d == ax:
                entries.append(i)
            else:
                shape = [1] * a.ndim
                shape[d] = a.shape[d]
                entries.append(np.arange(a.shape[d], dtype=_INDEX_DTYPE).reshape(shape))
        return getitem(a, tuple(entries))

    return _with_mode(trace, a, idx, a.shape[ax], mode, True, read, lambda v: v, fill_value)


__all__ = ["put_along_axis", "take", "take_along_axis"]
