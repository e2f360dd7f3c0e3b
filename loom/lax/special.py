"""More of `jax.lax`: the special functions (CHLO ops, differentiable as in JAX except
`digamma`), the inverse and hyperbolic trigonometric functions, and conveniences composed of other
ops (`full`, `full_like`, `reciprocal`, `exp2`, `select_n`, `split`, `collapse`, `batch_matmul`,
`scatter_sub`), with `jax.lax`'s signatures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects import chlo
from loom.frontend.tracing import dtype_kind, user_line
from loom.lax import ops
from loom.lax.ops import _op, _same_dtype, _unary

Array = Any


def _chlo(cls: type):
    def hlo(b: Any, x: Any) -> Any:
        return cls.build(b, x).results[0]
    hlo.__name__ = cls.name.split(".")[1]
    return hlo


erf = _unary("erf", _chlo(chlo.ErfOp), doc="Elementwise error function, as `jax.lax.erf`.")
erfc = _unary("erfc", _chlo(chlo.ErfcOp), doc="Elementwise complementary error function, as `jax.lax.erfc`.")
erf_inv = _unary("erf_inv", _chlo(chlo.ErfInvOp), doc="Elementwise inverse error function, as `jax.lax.erf_inv`.")
lgamma = _unary("lgamma", _chlo(chlo.LgammaOp), doc="Elementwise log |gamma(x)|, as `jax.lax.lgamma`.")
digamma = _unary("digamma", _chlo(chlo.DigammaOp),
                 doc="Elementwise digamma (no derivative: loom has no polygamma), as `jax.lax.digamma`.")


def _from_numpy(name: str, fn_name: str):
    """A lax function computed by `loom.numpy`'s (differentiable) formula, without promotion."""
    @_op("x")
    def fn(x: Array) -> Array:
        import loom.numpy as lnp
        t = _same_dtype(x)[0]
        if dtype_kind(t.dtype) != "f":
            raise TypeError(f"lax.{name} does not accept dtype {t.dtype} (at {user_line()})")
        return getattr(lnp, fn_name)(t)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{fn_name}`, as `jax.lax.{name}`."
    return fn


sinh = _from_numpy("sinh", "sinh")
cosh = _from_numpy("cosh", "cosh")
asin = _from_numpy("asin", "arcsin")
acos = _from_numpy("acos", "arccos")
atan = _from_numpy("atan", "arctan")
asinh = _from_numpy("asinh", "arcsinh")
acosh = _from_numpy("acosh", "arccosh")
atanh = _from_numpy("atanh", "arctanh")


@_op("x")
def reciprocal(x: Array) -> Array:
    """`1 / x`, as `jax.lax.reciprocal` (`integer_pow(x, -1)`)."""
    return ops.integer_pow(x, -1)


def exp2(x: Array) -> Array:
    """`2 ** x`, as `jax.lax.exp2` (`exp(x * log(2))`)."""
    return ops.exp(ops.mul(x, math.log(2.0)))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Array:
    """An array of `shape` filled with `fill_value` (a scalar), as `jax.lax.full`."""
    import loom.numpy as lnp
    if np.ndim(fill_value) != 0:
        raise TypeError(f"lax.full requires a scalar fill_value, got shape {np.shape(fill_value)} (at {user_line()})")
    return lnp.full(tuple(shape), fill_value, dtype=dtype if dtype is not None else lnp.result_type(fill_value))


def full_like(x: Array, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Array:
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    import loom.numpy as lnp
    return full(np.shape(x) if shape is None else shape, fill_value, lnp.result_type(x) if dtype is None else dtype)


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
    from loom.frontend.pytree import tree_flatten, tree_unflatten
    from loom.frontend.tracing import current_trace
    leaves, tree = tree_flatten(elems)
    if current_trace() is None:  # eagerly: trace and run once
        from loom.frontend.jit import jit
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
           "cosh", "digamma", "erf", "erf_inv", "erfc", "exp2", "full", "full_like", "lgamma", "reciprocal",
           "scatter_sub", "select_n", "sinh", "split"]
