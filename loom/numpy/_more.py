"""The second part of `loom.numpy`: creation (linspace, eye), more elementwise and logical
functions, reductions (prod, argmax, argmin, var, std, any, all), einsum / tensordot / outer,
shape ops (swapaxes, moveaxis, split, tile, repeat, flip, pad, roll), cumulative sums and
products, and sorting. Each works on tracers inside `loom.jit` (lowered to StableHLO) and runs
NumPy directly on plain arrays.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import DotDimensionNumbers
from loom.frontend.tracing import Tracer, is_floating, tensor_type, user_line
from loom.numpy import (
    ArrayLike,
    Axis,
    _axes,
    _broadcast,
    _elementwise_unary,
    _floating,
    _in_float32,
    _lift,
    _promote,
    _reduce,
    _trace_of,
    abs,
    add,
    astype,
    concatenate,
    divide,
    equal,
    exp,
    greater,
    less,
    log,
    maximum,
    mean,
    minimum,
    multiply,
    negative,
    not_equal,
    reshape,
    sqrt,
    subtract,
    sum,
    transpose,
    where,
)

# --- creation ----------------------------------------------------------------------------------


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None) -> np.ndarray:
    """`numpy.linspace`, float32 by default (as JAX)."""
    return np.linspace(start, stop, num, endpoint=endpoint).astype(dtype if dtype is not None else np.float32)


def eye(n: int, m: int | None = None, k: int = 0, dtype: Any = np.float32) -> np.ndarray:
    """The identity-like `n x m` matrix with ones on diagonal `k`, float32 by default."""
    return np.eye(n, m, k, dtype=dtype)


# --- elementwise -------------------------------------------------------------------------------

_floor = _elementwise_unary(np.floor, stablehlo.floor)
_ceil = _elementwise_unary(np.ceil, stablehlo.ceil)
log1p = _elementwise_unary(np.log1p, stablehlo.log_plus_one, to_float=True)
expm1 = _elementwise_unary(np.expm1, stablehlo.exponential_minus_one, to_float=True)


def floor(x: ArrayLike) -> Any:
    """Elementwise floor; integers and bools are returned unchanged (as JAX)."""
    if isinstance(x, Tracer) and x.dtype.kind in "iub":
        return x
    return _floor(x)


def ceil(x: ArrayLike) -> Any:
    """Elementwise ceiling; integers and bools are returned unchanged (as JAX)."""
    if isinstance(x, Tracer) and x.dtype.kind in "iub":
        return x
    return _ceil(x)


tan = _elementwise_unary(np.tan, stablehlo.tan, to_float=True)


def square(x: ArrayLike) -> Any:
    """Elementwise `x * x`."""
    if not isinstance(x, Tracer):
        return np.square(x)
    return multiply(x, x)


def reciprocal(x: ArrayLike) -> Any:
    """Elementwise `1 / x` (integer inputs give float32, as `divide`)."""
    if not isinstance(x, Tracer):
        return np.reciprocal(x)
    return divide(1, x) if is_floating(x.dtype) else divide(1.0, x)


def log2(x: ArrayLike) -> Any:
    """Elementwise base-2 logarithm."""
    if not isinstance(x, Tracer):
        return np.log2(x)
    return divide(log(x), float(np.log(2.0)))


def log10(x: ArrayLike) -> Any:
    """Elementwise base-10 logarithm."""
    if not isinstance(x, Tracer):
        return np.log10(x)
    return divide(log(x), float(np.log(10.0)))


def exp2(x: ArrayLike) -> Any:
    """Elementwise `2 ** x`."""
    if not isinstance(x, Tracer):
        return np.exp2(x)
    return exp(multiply(x if is_floating(x.dtype) else astype(x, np.float32), float(np.log(2.0))))


def isinf(x: ArrayLike) -> Any:
    """Elementwise: is positive or negative infinity."""
    if not isinstance(x, Tracer):
        return np.isinf(x)
    if not is_floating(x.dtype):
        return Tracer(x.trace.constant(np.asarray(False), shape=x.shape), x.trace)
    return equal(abs(x), np.inf)


def arctan2(y: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise angle of the point `(x, y)`, in `[-pi, pi]`."""
    trace = _trace_of(y, x)
    if trace is None:
        return np.arctan2(y, x)
    a, b = _promote(trace, y, x)
    d = _floating(a.dtype)
    a, b = _lift(trace, a, d, a.weak), _lift(trace, b, d, b.weak)
    return Tracer(stablehlo.atan2(trace.emit(), a.value, b.value), trace, a.weak and b.weak)


def _rem(trace: Any, a: Tracer, b: Tracer) -> Tracer:
    return Tracer(stablehlo.remainder(trace.emit(), a.value, b.value), trace, a.weak and b.weak)


def remainder(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise remainder with the sign of the divisor, as `numpy.remainder` (`%`)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.remainder(x, y)
    a, b = _promote(trace, x, y)
    r = _rem(trace, a, b)
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(b, 0)))
    return where(fix, add(r, b), r)


mod = remainder


def floor_divide(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise division rounded towards minus infinity, as `numpy.floor_divide` (`//`)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.floor_divide(x, y)
    a, b = _promote(trace, x, y)
    r = _rem(trace, a, b)
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(b, 0)))
    if a.dtype.kind in "iu":
        q = Tracer(stablehlo.divide(trace.emit(), a.value, b.value), trace, a.weak and b.weak)
        return where(fix, subtract(q, 1), q)
    # floats, as JAX: (x - fmod(x, y)) / y, corrected, then rounded
    div = divide(subtract(a, r), b)
    div = where(fix, subtract(div, 1.0), div)
    fl = floor(div)
    fl = where(greater(subtract(div, fl), 0.5), add(fl, 1.0), fl)
    return where(not_equal(div, 0), fl, multiply(0.0, divide(a, b)))


def _unary_tracer(x: Tracer, fn: Any) -> Tracer:
    return Tracer(fn(x.trace.emit(), x.value), x.trace, x.weak)


def sign(x: ArrayLike) -> Any:
    """Elementwise sign (-1, 0 or 1; NaN stays NaN); bools are their own sign."""
    if not isinstance(x, Tracer):
        return np.sign(x)
    if x.dtype.kind == "b":
        return x
    if x.dtype.kind == "u":
        return astype(not_equal(x, 0), x.dtype)
    return _unary_tracer(x, stablehlo.sign)


def round(x: ArrayLike, decimals: int = 0) -> Any:  # noqa: A001 - numpy's name
    """Round half to even, as `numpy.round` (integers are returned unchanged when `decimals >= 0`)."""
    if not isinstance(x, Tracer):
        return np.round(x, decimals)
    if x.dtype.kind in "iub":
        return x
    if decimals == 0:
        return _unary_tracer(x, stablehlo.round_nearest_even)
    factor = 10.0 ** decimals
    return divide(_unary_tracer(multiply(x, factor), stablehlo.round_nearest_even), factor)


around = round


def isfinite(x: ArrayLike) -> Any:
    """Elementwise: not infinite and not NaN (integers are always finite)."""
    if not isinstance(x, Tracer):
        return np.isfinite(x)
    if not is_floating(x.dtype):
        return Tracer(x.trace.constant(np.asarray(True), shape=x.shape), x.trace)
    return Tracer(stablehlo.is_finite(x.trace.emit(), x.value), x.trace)


def isnan(x: ArrayLike) -> Any:
    """Elementwise: is NaN."""
    if not isinstance(x, Tracer):
        return np.isnan(x)
    return not_equal(x, x)


def clip(x: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Any:
    """`x` limited to `[a_min, a_max]` (either may be None), broadcast and promoted as JAX."""
    if _trace_of(x, a_min, a_max) is None:
        return np.clip(x, a_min, a_max)
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


def logaddexp(x: ArrayLike, y: ArrayLike) -> Any:
    """`log(exp(x) + exp(y))`, computed stably (float results)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.logaddexp(x, y)
    a, b = _promote(trace, x, y)
    d = _floating(a.dtype)
    a, b = _lift(trace, a, d, a.weak), _lift(trace, b, d, b.weak)
    amax = maximum(a, b)
    delta = subtract(a, b)
    out = add(amax, log1p(exp(negative(abs(delta)))))
    # NaN deltas: both infinite of one sign (inf - inf) give amax, a real NaN stays NaN.
    return where(not_equal(delta, delta), add(a, b), out)


def _as_bool(x: Any) -> Tracer:
    return x if x.dtype == np.bool_ else astype(x, np.bool_)


def _logical_binary(np_fn: Any, hlo_fn: Any) -> Any:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        trace = _trace_of(x, y)
        if trace is None:
            return np_fn(x, y)
        a = _as_bool(_lift(trace, x))
        b = _as_bool(_lift(trace, y))
        a, b = _promote(trace, a, b)
        return Tracer(hlo_fn(trace.emit(), a.value, b.value), trace)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}` (a bool array; nonzero is true)."
    return fn


logical_and = _logical_binary(np.logical_and, stablehlo.and_)
logical_or = _logical_binary(np.logical_or, stablehlo.or_)
logical_xor = _logical_binary(np.logical_xor, stablehlo.xor)


def logical_not(x: ArrayLike) -> Any:
    """Elementwise `numpy.logical_not` (a bool array)."""
    if not isinstance(x, Tracer):
        return np.logical_not(x)
    return Tracer(stablehlo.not_(x.trace.emit(), _as_bool(x).value), x.trace)


# --- reductions --------------------------------------------------------------------------------


def prod(x: ArrayLike, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """Product over `axis`; bool and small ints multiply as int32, as JAX."""
    if not isinstance(x, Tracer):
        return np.prod(x, axis=axis, keepdims=keepdims, dtype=dtype)
    if dtype is not None:
        x = astype(x, dtype)
    elif x.dtype.kind == "b" or (x.dtype.kind in "iu" and x.dtype.itemsize < 4):
        x = astype(x, np.int32 if x.dtype.kind != "u" else np.uint32)
    return _in_float32(x, lambda xf: _reduce(xf, axis, keepdims, 1, stablehlo.multiply))


def any(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether any element over `axis` is nonzero."""
    if not isinstance(x, Tracer):
        return np.any(x, axis=axis, keepdims=keepdims)
    return _reduce(_as_bool(x), axis, keepdims, False, stablehlo.or_)


def all(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether all elements over `axis` are nonzero."""
    if not isinstance(x, Tracer):
        return np.all(x, axis=axis, keepdims=keepdims)
    return _reduce(_as_bool(x), axis, keepdims, True, stablehlo.and_)


def var(x: ArrayLike, axis: Axis = None, keepdims: bool = False, ddof: int = 0) -> Any:
    """Variance over `axis` (divided by `n - ddof`); integer inputs give float32."""
    if not isinstance(x, Tracer):
        return np.var(x, axis=axis, keepdims=keepdims, ddof=ddof)
    xf = astype(x, _floating(x.dtype))
    axes = _axes(axis, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))

    def body(t: Tracer) -> Tracer:
        centered = subtract(t, mean(t, axis=axes, keepdims=True))
        return divide(sum(multiply(centered, centered), axis=axes, keepdims=keepdims), float(count - ddof))
    return _in_float32(xf, body)


def std(x: ArrayLike, axis: Axis = None, keepdims: bool = False, ddof: int = 0) -> Any:
    """Standard deviation over `axis`."""
    if not isinstance(x, Tracer):
        return np.std(x, axis=axis, keepdims=keepdims, ddof=ddof)
    return sqrt(var(x, axis=axis, keepdims=keepdims, ddof=ddof))


def _arg_reduce(x: Tracer, axis: int | None, keepdims: bool, largest: bool) -> Tracer:
    trace = x.trace
    if x.dtype == np.bool_:
        x = astype(x, np.int32)
    if axis is None:
        out = _arg_reduce(reshape(x, (-1,)), 0, False, largest)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    if x.ndim == 0:
        raise ValueError(f"argmax/argmin of a 0-d array needs axis=None (at {user_line()})")
    ax = _axes(axis, x.ndim)[0]
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get argmax/argmin of an empty sequence (at {user_line()})")
    b = trace.emit()
    idx = stablehlo.iota(b, tensor_type(x.shape, np.int32), ax)
    is_float = is_floating(x.dtype)
    if is_float:
        init = -np.inf if largest else np.inf
    else:
        info = np.iinfo(x.dtype)
        init = info.min if largest else info.max
    init_v = trace.constant(np.asarray(init, dtype=x.dtype))
    init_i = trace.constant(np.asarray(np.iinfo(np.int32).max, dtype=np.int32))
    direction = "GT" if largest else "LT"

    def body(bb: Any, args: list) -> list:
        av, ai, bv, bi = args[0], args[1], args[2], args[3]
        wins = stablehlo.compare(bb, av, bv, direction)
        eq = stablehlo.compare(bb, av, bv, "EQ")
        if is_float:  # NaN wins (numpy returns the first NaN)
            a_nan = stablehlo.compare(bb, av, av, "NE")
            b_nan = stablehlo.compare(bb, bv, bv, "NE")
            wins = stablehlo.or_(bb, wins, a_nan)
            eq = stablehlo.or_(bb, eq, stablehlo.and_(bb, a_nan, b_nan))
        val = stablehlo.select(bb, wins, av, bv)
        ind = stablehlo.select(bb, eq, stablehlo.minimum(bb, ai, bi), stablehlo.select(bb, wins, ai, bi))
        return [val, ind]

    # `reduce`'s body arguments are (acc..., x...): values and indices of both sides.
    results = stablehlo.reduce(b, [x.value, idx], [init_v, init_i], [ax], body)
    out = Tracer(results[1], trace)
    if keepdims:
        out = reshape(out, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))
    return out


def argmax(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the largest element along `axis` (of the flattened array when None); the first
    on ties and the first NaN, as numpy. int32, as JAX."""
    if not isinstance(x, Tracer):
        return np.argmax(x, axis=axis, keepdims=keepdims)
    return _arg_reduce(x, axis, keepdims, True)


def argmin(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the smallest element along `axis`; the first on ties and the first NaN."""
    if not isinstance(x, Tracer):
        return np.argmin(x, axis=axis, keepdims=keepdims)
    return _arg_reduce(x, axis, keepdims, False)


# --- linear algebra ----------------------------------------------------------------------------


def _dot_general(a: Tracer, b: Tracer, contract: tuple[Sequence[int], Sequence[int]],
                 batch: tuple[Sequence[int], Sequence[int]] = ((), ())) -> Tracer:
    """`stablehlo.dot_general`: result axes are batch, free axes of `a`, free axes of `b`."""
    trace = a.trace
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=tuple(batch[0]), rhs_batching_dimensions=tuple(batch[1]),
                                 lhs_contracting_dimensions=tuple(contract[0]),
                                 rhs_contracting_dimensions=tuple(contract[1]))
    return Tracer(stablehlo.dot_general(trace.emit(), a.value, b.value, dn), trace, a.weak and b.weak)


def _promote_pair(x: ArrayLike, y: ArrayLike) -> tuple[Tracer, Tracer]:
    from loom.frontend.tracing import promote_types, scalar_dtype
    trace = _trace_of(x, y)
    d, weak = promote_types(scalar_dtype(x), scalar_dtype(y))
    return _lift(trace, x, d, weak), _lift(trace, y, d, weak)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any] = 2) -> Any:
    """`numpy.tensordot`: contract the last `axes` axes of `a` with the first of `b`, or the
    axes listed in the pair `axes`."""
    if _trace_of(a, b) is None:
        return np.tensordot(a, b, axes)
    x, y = _promote_pair(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax_a, ax_b = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    ax_a = [int(i) % x.ndim for i in ax_a]
    ax_b = [int(i) % y.ndim for i in ax_b]
    if len(ax_a) != len(ax_b) or [x.shape[i] for i in ax_a] != [y.shape[i] for i in ax_b]:
        raise ValueError(f"tensordot: shape mismatch between {x.shape} (axes {ax_a}) and {y.shape} (axes {ax_b}) "
                         f"(at {user_line()})")
    return _dot_general(x, y, (ax_a, ax_b))


def outer(a: ArrayLike, b: ArrayLike) -> Any:
    """The outer product of the flattened `a` and `b`."""
    if _trace_of(a, b) is None:
        return np.outer(a, b)
    x, y = _promote_pair(a, b)
    return multiply(reshape(x, (-1, 1)), reshape(y, (1, -1)))


def _expand_ellipses(inputs: list[str], out: str | None, ranks: list[int],
                     spec: str) -> tuple[list[str], str | None, str]:
    """Replace each `...` by labels not used in `spec`, aligned on the right across operands;
    also returns the labels of the widest ellipsis."""
    unused = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    counts = [rank - (len(term) - 3) if "..." in term else 0 for term, rank in zip(inputs, ranks)]
    for term, rank, n in zip(inputs, ranks, counts):
        if n < 0:
            raise ValueError(f"einsum: term {term!r} has too many labels for rank {rank} (at {user_line()})")
    widest = builtins.max(counts, default=0)
    expanded = [term.replace("...", "".join(unused[widest - n:widest])) for term, n in zip(inputs, counts)]
    ell = "".join(unused[:widest])
    return expanded, None if out is None else out.replace("...", ell), ell


def einsum(spec: str, *operands: ArrayLike) -> Any:
    """`numpy.einsum` in explicit (`->`) or implicit form, with ellipses, lowered to reductions,
    `stablehlo.dot_general` (operands contracted pairwise, left to right) and
    `stablehlo.transpose`. Inside `loom.jit`, a label repeated within one operand (a diagonal)
    and ellipsis dimensions that would broadcast (sizes differ) are not supported."""
    if _trace_of(*operands) is None:
        return np.einsum(spec, *operands)
    from loom.frontend.tracing import promote_types, scalar_dtype
    trace = _trace_of(*operands)
    spec = spec.replace(" ", "")
    lhs, out = spec.split("->") if "->" in spec else (spec, None)
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {spec!r} names {len(inputs)} operands but {len(operands)} were given "
                         f"(at {user_line()})")
    d, weak = promote_types(*(scalar_dtype(o) for o in operands))
    ts = [_lift(trace, o, d, weak) for o in operands]
    if "." in spec:
        if builtins.any(t.replace("...", "").count(".") for t in (*inputs, out or "")):
            raise ValueError(f"einsum: a '.' outside an ellipsis in {spec!r} (at {user_line()})")
        inputs, out, ell = _expand_ellipses(inputs, out, [t.ndim for t in ts], spec)
        if out is None:  # implicit form: the ellipsis labels first, then the others sorted
            labels = "".join(inputs)
            out = ell + "".join(sorted(c for c in set(labels) if labels.count(c) == 1 and c not in ell))
    if out is None:
        labels = "".join(inputs)
        out = "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    for term in (*inputs, out):
        if not builtins.all(c.isalpha() for c in term) or len(set(term)) != len(term):
            raise NotImplementedError(f"einsum: term {term!r} of {spec!r} repeats a label or has a character that "
                                      f"is not a letter; diagonals are not supported (at {user_line()})")
    for term, t in zip(inputs, ts):
        if len(term) != t.ndim:
            raise ValueError(f"einsum: term {term!r} has {len(term)} labels for an operand of shape {t.shape} "
                             f"(at {user_line()})")
    if set(out) - set("".join(inputs)):
        raise ValueError(f"einsum: output labels of {spec!r} do not appear in the inputs (at {user_line()})")
    sizes: dict[str, int] = {}
    for term, t in zip(inputs, ts):
        for c, n in zip(term, t.shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"einsum: label {c!r} of {spec!r} has sizes {sizes[c]} and {n}; broadcasting is "
                                 f"not supported (at {user_line()})")
    # Sum out the labels only one operand has and the output lacks.
    terms = list(inputs)
    for k, (term, t) in enumerate(zip(terms, ts)):
        others = "".join(terms[:k] + terms[k + 1:]) + out
        drop = [i for i, c in enumerate(term) if c not in others]
        if drop:
            ts[k] = sum(t, axis=tuple(drop))
            terms[k] = "".join(c for i, c in enumerate(term) if i not in drop)
    # Contract pairwise, left to right, keeping the labels later operands or the output need.
    while len(ts) > 1:
        ta, tb = terms[0], terms[1]
        keep = "".join(terms[2:]) + out
        batch = [c for c in ta if c in tb and c in keep]
        contract = [c for c in ta if c in tb and c not in keep]
        t = _dot_general(ts[0], ts[1], ([ta.index(c) for c in contract], [tb.index(c) for c in contract]),
                         ([ta.index(c) for c in batch], [tb.index(c) for c in batch]))
        term = "".join(batch) + "".join(c for c in ta if c not in tb) + "".join(c for c in tb if c not in ta)
        terms, ts = [term, *terms[2:]], [t, *ts[2:]]
    return transpose(ts[0], [terms[0].index(c) for c in out])


# --- shapes ------------------------------------------------------------------------------------


def swapaxes(x: ArrayLike, axis1: int, axis2: int) -> Any:
    """`x` with two axes exchanged."""
    if not isinstance(x, Tracer):
        return np.swapaxes(x, axis1, axis2)
    perm = list(range(x.ndim))
    a, b = _axes(axis1, x.ndim)[0], _axes(axis2, x.ndim)[0]
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """`x` with axes `source` moved to positions `destination`, the others in order."""
    if not isinstance(x, Tracer):
        return np.moveaxis(x, source, destination)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source and destination must have the same length (at {user_line()})")
    src = [s % x.ndim for s in src]
    dst = [d % x.ndim for d in dst]
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(x, perm)


def _take_slice(x: Tracer, axis: int, start: int, stop: int) -> Tracer:
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[axis], limits[axis] = start, stop
    if starts == [0] * x.ndim and limits == list(x.shape):
        return x
    return Tracer(stablehlo.slice_(x.trace.emit(), x.value, starts, limits, [1] * x.ndim), x.trace, x.weak)


def split(x: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """`x` cut along `axis` into equal sections or at the given indices."""
    if not isinstance(x, Tracer):
        return np.split(x, indices_or_sections, axis)
    ax = _axes(axis, x.ndim)[0]
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"array split does not result in an equal division: {n} into {k} "
                             f"(at {user_line()})")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0, *(builtins.min(builtins.max(int(i) if i >= 0 else int(i) + n, 0), n)
                       for i in indices_or_sections), n]
    return [_take_slice(x, ax, lo, builtins.max(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def flip(x: ArrayLike, axis: Axis = None) -> Any:
    """`x` reversed along `axis` (all axes when None)."""
    if not isinstance(x, Tracer):
        return np.flip(x, axis)
    axes = _axes(axis, x.ndim)
    if not axes:
        return x
    return Tracer(stablehlo.reverse(x.trace.emit(), x.value, list(axes)), x.trace, x.weak)


def tile(x: ArrayLike, reps: int | Sequence[int]) -> Any:
    """`x` repeated `reps` times along each axis, as `numpy.tile`."""
    if not isinstance(x, Tracer):
        return np.tile(x, reps)
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    n = builtins.max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + reps
    shape = (1,) * (n - x.ndim) + x.shape
    t = reshape(x, shape)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    expanded = reshape(t, [d for s in shape for d in (1, s)])
    b = _broadcast(expanded, tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    return reshape(b, [r * s for r, s in zip(reps, shape)])


def repeat(x: ArrayLike, repeats: int, axis: int | None = None) -> Any:
    """Each element of `x` repeated `repeats` times along `axis` (of the flattened array when None);
    `repeats` must be an int inside `loom.jit`."""
    if not isinstance(x, Tracer):
        return np.repeat(x, repeats, axis)
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError(f"repeat: only an int `repeats` is supported inside loom.jit (at {user_line()})")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = _axes(axis, x.ndim)[0]
    r = int(repeats)
    shape = list(x.shape)
    t = reshape(x, shape[:ax + 1] + [1] + shape[ax + 1:])
    t = _broadcast_dims(t, tuple(shape[:ax + 1] + [r] + shape[ax + 1:]))
    return reshape(t, shape[:ax] + [shape[ax] * r] + shape[ax + 1:])


def _broadcast_dims(x: Tracer, shape: tuple[int, ...]) -> Tracer:
    """Broadcast `x` (of the same rank as `shape`) to `shape`."""
    if x.shape == shape:
        return x
    v = stablehlo.broadcast_in_dim(x.trace.emit(), x.value, shape, list(range(len(shape))))
    return Tracer(v, x.trace, x.weak)


def pad(x: ArrayLike, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """`x` padded with `constant_values` (mode 'constant' only inside `loom.jit`); `pad_width` is
    an int, a `(before, after)` pair, or one pair per axis."""
    if not isinstance(x, Tracer):
        return np.pad(x, pad_width, mode=mode, constant_values=constant_values) if mode == "constant" \
            else np.pad(x, pad_width, mode=mode)
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not supported inside loom.jit; only 'constant' "
                                  f"(at {user_line()})")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"pad: negative pad widths {widths.tolist()} (at {user_line()})")
    value = x.trace.constant(np.asarray(constant_values, dtype=x.dtype))
    v = stablehlo.pad(x.trace.emit(), x.value, value, [int(w) for w in widths[:, 0]], [int(w) for w in widths[:, 1]])
    return Tracer(v, x.trace, x.weak)


def roll(x: ArrayLike, shift: int | Sequence[int], axis: Axis = None) -> Any:
    """`x` shifted cyclically by `shift` along `axis` (of the flattened array when None)."""
    if not isinstance(x, Tracer):
        return np.roll(x, shift, axis)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    shifts = [shift] if isinstance(shift, (int, np.integer)) else list(shift)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length (at {user_line()})")
    for s, a in zip(shifts, axes):
        ax = _axes(int(a), x.ndim)[0]
        n = x.shape[ax]
        if n == 0:
            continue
        k = int(s) % n
        if k:
            x = concatenate([_take_slice(x, ax, n - k, n), _take_slice(x, ax, 0, n - k)], axis=ax)
    return x


# --- cumulative --------------------------------------------------------------------------------


def _cumulative(x: Tracer, axis: int | None, dtype: Any, init: Any, hlo_fn: Any) -> Tracer:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if dtype is not None:
        x = astype(x, dtype)
    elif x.dtype.kind == "b":  # as JAX: bools accumulate as int32, other dtypes keep theirs
        x = astype(x, np.int32)
    ax = _axes(axis, x.ndim)[0]
    n = x.shape[ax]
    if n == 0:
        return x
    window = [1] * x.ndim
    window[ax] = n
    padding = [(0, 0)] * x.ndim
    padding[ax] = (n - 1, 0)
    init_v = x.trace.constant(np.asarray(init, dtype=x.dtype))
    v = stablehlo.reduce_window(x.trace.emit(), [x.value], [init_v], window,
                                lambda b, args: [hlo_fn(b, args[0], args[1])], padding=padding)
    return Tracer(v, x.trace, x.weak)


def cumsum(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """Running sum along `axis` (of the flattened array when None), via `stablehlo.reduce_window`."""
    if not isinstance(x, Tracer):
        return np.cumsum(x, axis=axis, dtype=dtype)
    return _cumulative(x, axis, dtype, 0, stablehlo.add)


def cumprod(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """Running product along `axis` (of the flattened array when None)."""
    if not isinstance(x, Tracer):
        return np.cumprod(x, axis=axis, dtype=dtype)
    return _cumulative(x, axis, dtype, 1, stablehlo.multiply)


# --- sorting -----------------------------------------------------------------------------------


def _less_total(b: Any, lhs: Any, rhs: Any, is_float: bool) -> Any:
    """`lhs < rhs` with NaNs sorted last (as numpy)."""
    lt = stablehlo.compare(b, lhs, rhs, "LT")
    if not is_float:
        return lt
    lhs_nan = stablehlo.compare(b, lhs, lhs, "NE")
    rhs_nan = stablehlo.compare(b, rhs, rhs, "NE")
    # lhs < rhs, or rhs is NaN and lhs is not
    return stablehlo.or_(b, lt, stablehlo.and_(b, rhs_nan, stablehlo.not_(b, lhs_nan)))


def _sort(x: Tracer, axis: int | None, with_indices: bool) -> list[Tracer]:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x.ndim == 0:
        raise ValueError(f"sort of a 0-d array needs axis=None (at {user_line()})")
    ax = _axes(axis, x.ndim)[0]
    is_float = is_floating(x.dtype)
    b = x.trace.emit()
    inputs = [x.value]
    if with_indices:
        inputs.append(stablehlo.iota(b, tensor_type(x.shape, np.int32), ax))
    results = stablehlo.sort(b, inputs, ax, lambda bb, args: [_less_total(bb, args[0], args[1], is_float)],
                             is_stable=True)
    results = [results] if not isinstance(results, (list, tuple)) else list(results)
    return [Tracer(results[0], x.trace, x.weak)] + [Tracer(r, x.trace) for r in results[1:]]


def sort(x: ArrayLike, axis: int | None = -1) -> Any:
    """`x` sorted ascending along `axis` (NaNs last), via `stablehlo.sort`."""
    if not isinstance(x, Tracer):
        return np.sort(x, axis=axis)
    return _sort(x, axis, False)[0]


def argsort(x: ArrayLike, axis: int | None = -1) -> Any:
    """Indices that sort `x` along `axis` (a stable sort; int32, as JAX)."""
    if not isinstance(x, Tracer):
        return np.argsort(x, axis=axis, kind="stable")
    return _sort(x, axis, True)[1]


__all__ = [
    "arctan2", "exp2", "floor_divide", "isinf", "log10", "log2", "mod", "reciprocal", "remainder", "square", "tan",
    "all", "any", "argmax", "argmin", "argsort", "around", "ceil", "clip", "cumprod", "cumsum", "einsum", "expm1",
    "eye", "flip", "floor", "isfinite", "isnan", "linspace", "log1p", "logaddexp", "logical_and", "logical_not",
    "logical_or", "logical_xor", "moveaxis", "outer", "pad", "prod", "repeat", "roll", "round", "sign", "sort",
    "split", "std", "swapaxes", "tensordot", "tile", "var",
]
