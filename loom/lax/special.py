"""More of `jax.lax`: the special functions (CHLO ops, differentiable as in JAX except
`digamma`), the inverse and hyperbolic trigonometric functions, and conveniences composed of other
ops (`full`, `full_like`, `reciprocal`, `exp2`, `select_n`, `split`, `collapse`, `batch_matmul`,
`scatter_sub`), with `jax.lax`'s signatures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from loom.frontend.jit import jit
from loom.frontend.pytree import tree_flatten, tree_unflatten
from loom.frontend.tracing import Tracer, broadcast_to_shape, current_trace, dtype_kind, lift, result_type, user_line
from loom.lax import ops
from loom.lax.ops import same_dtype, traced_op

Array = Any


def _composite(name: str, body: Callable[[Tracer], Tracer], doc: str) -> Callable[[Array], Array]:
    """A lax function StableHLO has no single op for, computed by a (differentiable) formula of
    other ops, without promotion; float16 and bfloat16 are computed in float32 (as XLA expands
    half-precision math)."""
    @traced_op("x")
    def fn(x: Array) -> Array:
        t = same_dtype(x)[0]
        if dtype_kind(t.dtype) != "f":
            raise TypeError(f"lax.{name} does not accept dtype {t.dtype} (at {user_line()})")
        if t.dtype.itemsize >= 4:
            return body(t)
        out = body(lift(t.trace, t, np.dtype(np.float32), t.weak))
        return lift(out.trace, out, t.dtype, out.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


_LN2 = math.log(2.0)


def _sinh(x: Tracer) -> Tracer:
    return ops.mul(ops.sub(ops.expm1(x), ops.expm1(ops.neg(x))), 0.5)


def _cosh(x: Tracer) -> Tracer:
    return ops.mul(ops.add(ops.exp(x), ops.exp(ops.neg(x))), 0.5)


def _asin(x: Tracer) -> Tracer:
    return ops.atan2(x, ops.sqrt(ops.mul(ops.sub(1.0, x), ops.add(1.0, x))))


def _acos(x: Tracer) -> Tracer:
    out = ops.mul(ops.atan2(ops.sqrt(ops.mul(ops.sub(1.0, x), ops.add(1.0, x))), ops.add(1.0, x)), 2.0)
    return ops.select(ops.eq(x, -1.0), float(np.pi), out)  # atan2(0, 0) is 0 there (as JAX)


def _atan(x: Tracer) -> Tracer:
    return ops.atan2(x, 1.0)


def _big(x: Tracer) -> float:
    """Beyond this magnitude `sqrt(x * x + 1) == |x|` in `x`'s dtype."""
    return float(1.0 / np.sqrt(ml_dtypes.finfo(x.dtype).eps))


def _asinh(x: Tracer) -> Tracer:
    a = ops.abs(x)
    big = ops.gt(a, _big(x))
    small = ops.select(big, 1.0, a)  # keeps the unused branch finite (and its gradient)
    r = ops.log1p(ops.add(small, ops.div(ops.mul(small, small), ops.add(1.0, ops.sqrt(ops.add(ops.mul(small, small),
                                                                                               1.0))))))
    r = ops.select(big, ops.add(ops.log(a), _LN2), r)
    return ops.select(ops.lt(x, 0.0), ops.neg(r), r)


def _acosh(x: Tracer) -> Tracer:
    big = ops.gt(x, _big(x))
    small = ops.select(big, 2.0, x)
    r = ops.log(ops.add(small, ops.sqrt(ops.mul(ops.sub(small, 1.0), ops.add(small, 1.0)))))
    return ops.select(big, ops.add(ops.log(x), _LN2), r)


def _atanh(x: Tracer) -> Tracer:
    return ops.mul(ops.sub(ops.log1p(x), ops.log1p(ops.neg(x))), 0.5)


sinh = _composite("sinh", _sinh, "Elementwise hyperbolic sine (as `(expm1(x) - expm1(-x)) / 2`).")
cosh = _composite("cosh", _cosh, "Elementwise hyperbolic cosine.")
asin = _composite("asin", _asin, "Elementwise inverse sine, in `[-pi/2, pi/2]` (NaN outside `[-1, 1]`).")
acos = _composite("acos", _acos, "Elementwise inverse cosine, in `[0, pi]` (NaN outside `[-1, 1]`).")
atan = _composite("atan", _atan, "Elementwise inverse tangent, in `[-pi/2, pi/2]`.")
asinh = _composite("asinh", _asinh, "Elementwise inverse hyperbolic sine.")
acosh = _composite("acosh", _acosh, "Elementwise inverse hyperbolic cosine (NaN below 1).")
atanh = _composite("atanh", _atanh, "Elementwise inverse hyperbolic tangent (NaN outside `[-1, 1]`).")


@traced_op("x")
def reciprocal(x: Array) -> Array:
    """`1 / x`, as `jax.lax.reciprocal` (`integer_pow(x, -1)`)."""
    return ops.integer_pow(x, -1)


def exp2(x: Array) -> Array:
    """`2 ** x`, as `jax.lax.exp2` (`exp(x * log(2))`)."""
    return ops.exp(ops.mul(x, math.log(2.0)))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Array:
    """An array of `shape` filled with `fill_value` (a scalar), as `jax.lax.full`."""
    if np.ndim(fill_value) != 0:
        raise TypeError(f"lax.full requires a scalar fill_value, got shape {np.shape(fill_value)} (at {user_line()})")
    dtype = dtype if dtype is not None else result_type(fill_value)
    if isinstance(fill_value, Tracer):
        out = broadcast_to_shape(fill_value, tuple(int(s) for s in shape))
        return ops.convert_element_type(out, dtype)
    return np.full(tuple(shape), fill_value, dtype=dtype)


def full_like(x: Array, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Array:
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    return full(np.shape(x) if shape is None else shape, fill_value, result_type(x) if dtype is None else dtype)


def select_n(which: Array, *cases: Array) -> Array:
    """`cases[which]` elementwise, as `jax.lax.select_n`: `which` boolean (two cases) or int32."""
    if not cases:
        raise ValueError(f"select_n requires at least one case (at {user_line()})")
    w = which
    dtype = np.dtype(getattr(w, "dtype", None) or np.asarray(w).dtype)
    if dtype == np.bool_:
        if len(cases) != 2:
            raise ValueError(f"select_n with a boolean `which` takes two cases, got {len(cases)} (at {user_line()})")
        return ops.select(w, cases[1], cases[0])
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):  # which < k + 1 picks among the first k + 1
        out = ops.select(ops.lt(w, np.asarray(k + 1, dtype)), cases[k], out)
    return out


def split(operand: Array, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """`operand` cut along `axis` into pieces of `sizes`, as `jax.lax.split`."""
    n = np.shape(operand)[axis]
    if sum(sizes) != n:
        raise ValueError(f"lax.split: sizes {list(sizes)} must sum to the axis size {n} (at {user_line()})")
    out, start = [], 0
    for s in sizes:
        out.append(ops.slice_in_dim(operand, start, start + s, axis=axis))
        start += s
    return out


def collapse(operand: Array, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """Dimensions `start_dimension` up to `stop_dimension` merged into one, as `jax.lax.collapse`."""
    shape = np.shape(operand)
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = int(np.prod(shape[start_dimension:stop]))
    return ops.reshape(operand, (*shape[:start_dimension], size, *shape[stop:]))


def batch_matmul(lhs: Array, rhs: Array, precision: Any = None) -> Array:
    """Batched matrix product over the leading dimensions, as `jax.lax.batch_matmul`."""
    nd = np.ndim(lhs)
    if nd < 2 or nd != np.ndim(rhs):
        raise ValueError(f"batch_matmul requires operands of one rank >= 2, got {np.shape(lhs)} and {np.shape(rhs)} "
                         f"(at {user_line()})")
    batch = tuple(range(nd - 2))
    return ops.dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision=precision)


def scatter_sub(operand: Array, scatter_indices: Array, updates: Array, dimension_numbers: Any, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Array:
    """`operand` with `updates` subtracted at the scattered positions, as `jax.lax.scatter_sub`."""
    return ops.scatter_add(operand, scatter_indices, ops.neg(updates), dimension_numbers,
                           indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)


def associative_scan(fn: Any, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations of `elems` (a pytree of arrays of one length along `axis`) by the
    associative `fn`, as `jax.lax.associative_scan`: the parallel odd/even recursion (Blelloch),
    O(log n) steps of whole-array ops, each step combining every other element."""
    leaves, tree = tree_flatten(elems)
    if current_trace() is None:  # eagerly: trace and run once
        return jit(lambda e: associative_scan(fn, e, reverse, axis))(elems)
    if not leaves:
        return elems
    lengths = {np.shape(x)[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(f"associative_scan: the arrays must have one length along axis {axis}, got "
                         f"{sorted(lengths)} (at {user_line()})")
    axis %= np.ndim(leaves[0])
    if reverse:
        leaves = [ops.rev(x, [axis]) for x in leaves]

    def combine(a: list, b: list) -> list:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems, {tree}, got {out_tree} "
                            f"(at {user_line()})")
        return out

    def part(xs: list, start: int, limit: int | None, stride: int = 1) -> list:
        return [ops.slice_in_dim(x, start, limit, stride, axis) for x in xs]

    def interleave(a: Any, b: Any) -> Any:  # a[0], b[0], a[1], b[1], ...
        same = np.shape(a)[axis] == np.shape(b)[axis]
        cfg_a = [(0, 0, 0)] * np.ndim(a)
        cfg_b = [(0, 0, 0)] * np.ndim(b)
        cfg_a[axis] = (0, 1 if same else 0, 1)
        cfg_b[axis] = (1, 0 if same else 1, 1)
        zero = np.zeros((), np.dtype(a.dtype))
        join = ops.bitwise_or if np.dtype(a.dtype) == np.bool_ else ops.add
        return join(ops.pad(a, zero, cfg_a), ops.pad(b, zero, cfg_b))

    def scan(xs: list) -> list:
        n = np.shape(xs[0])[axis]
        if n < 2:
            return xs
        odd = scan(combine(part(xs, 0, -1, 2), part(xs, 1, None, 2)))
        if n % 2 == 0:
            even = combine(part(odd, 0, -1), part(xs, 2, None, 2))
        else:
            even = combine(odd, part(xs, 2, None, 2))
        even = [ops.concatenate([ops.slice_in_dim(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    out = scan(leaves)
    if reverse:
        out = [ops.rev(x, [axis]) for x in out]
    return tree_unflatten(tree, out)


__all__ = ["acos", "acosh", "asin", "asinh", "associative_scan", "atan", "atanh", "batch_matmul", "collapse",
           "cosh", "exp2", "full", "full_like", "reciprocal",
           "scatter_sub", "select_n", "sinh", "split"]
