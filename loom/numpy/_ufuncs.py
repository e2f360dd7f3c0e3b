"""Elementwise functions: arithmetic, comparisons, exponentials and logarithms, trigonometry,
rounding, signs, logical and bitwise operations, and the special functions `i0`, `spacing`.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom import lax
from loom.dialects import chlo, stablehlo
from loom.frontend.tracing import (
    Tracer,
    filled_like,
    is_floating,
    promote_types,
    scalar_dtype,
    tensor_type,
    user_line,
)
from loom.frontend.tracing import floating_dtype as _floating
from loom.frontend.tracing import lift as _lift
from loom.frontend.tracing import promote as _promote
from loom.frontend.tracing import trace_of as _trace_of
from loom.lax import special as lax_special
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _reductions as reductions
from loom.numpy import _scalar_types as scalar_types
from loom.numpy._util import ArrayLike, as_bool, dtype_of, is_traced
from loom.ops import elementwise


def _elementwise_binary(np_fn: Callable, hlo_fn: Callable, to_float: bool = False,
                        integers: str | None = None) -> Callable[[ArrayLike, ArrayLike], Any]:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        trace = _trace_of(x, y)
        if trace is None:  # NumPy, in the dtype JAX's promotion gives (numpy's may be wider)
            d = promote_types(scalar_dtype(x), scalar_dtype(y))[0]
            return np_fn(*(v.astype(d) if isinstance(v, (np.ndarray, np.generic)) else v for v in (x, y)))
        a, b = _promote(trace, x, y)
        if integers is not None:
            _require_integers(np_fn.__name__, a.dtype, integers)
        if to_float:
            a, b = _float_tracer(a), _float_tracer(b)
        return Tracer(hlo_fn(trace.emit(), a.value, b.value), trace, a.weak and b.weak)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}`, with JAX's dtype promotion and broadcasting."
    return fn


def _elementwise_unary(np_fn: Callable, hlo_fn: Callable, to_float: bool = False,
                       integers: str | None = None) -> Callable[[ArrayLike], Any]:
    def fn(x: ArrayLike) -> Any:
        trace = _trace_of(x)
        if trace is None:
            return np_fn(x)
        if integers is not None:
            _require_integers(np_fn.__name__, x.dtype, integers)
        d = _floating(x.dtype) if to_float else x.dtype
        t = _lift(trace, x, d, x.weak)
        return Tracer(hlo_fn(trace.emit(), t.value), trace, t.weak)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}`."
    return fn


def _require_integers(name: str, dtype: np.dtype, kinds: str) -> None:
    """numpy's TypeError for an operand dtype of a kind outside `kinds` ("iu", or "iub" with bools)."""
    if dtype.kind not in kinds:
        raise TypeError(f"{name}: arguments must be integers{' or bools' if 'b' in kinds else ''}, got {dtype} "
                        f"(at {user_line()})")


# The rows of the op table (loom.ops.elementwise) whose loom.numpy function is numpy's of the same
# name applied by the op: numpy's own function on plain arrays (in the dtype JAX's promotion
# gives), traced the operands promoted (to a floating dtype for an op that takes no integers;
# refused with numpy's TypeError unless integers, or bools where the op takes them, for an op that
# takes no floats) and broadcast, then the op. The other rows' functions are written out in this
# module, for what numpy or jax.numpy adds to the op, listed here with the reason.
WRITTEN_BY_HAND = {
    **dict.fromkeys(("abs", "sign"), "unsigned and bool operands as jax.numpy treats them (returned, or compared)"),
    **dict.fromkeys(("floor", "ceil"), "integer and bool operands returned unchanged (as jax.numpy)"),
    **dict.fromkeys(("isfinite", "isinf", "isposinf", "isneginf"),
                    "integer and bool operands answered without the op (never infinite)"),
    "square": "`x * x`, which takes bools (chlo.square does not)",
    "true_divide": "integer operands divided as floats (the op divides integers)",
    "right_shift": "arithmetic for signed and logical for unsigned integers: two ops",
    "bitwise_count": "the count of the absolute value's bits, as uint8",
    **dict.fromkeys(("sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "cbrt"),
                    "jax.numpy's formula, half precision computed in float32"),
    **dict.fromkeys(("real", "imag", "conjugate"), "the front end has no complex dtype"),
    **dict.fromkeys(("astype", "where", "clip"), "arguments beside the op's operands (a dtype, one-argument "
                                                  "where, optional bounds)"),
}


def elementwise_function(row: Any) -> Callable[..., Any]:
    """The loom.numpy function of an op-table row, named `row.lnp` (numpy's name)."""
    np_fn = getattr(np, row.lnp)

    def hlo(b: Any, *values: Any) -> Any:
        return row.op.build(b, *values).results[0]
    kinds = row.op.definition.operands[0].constraint.kinds
    to_float = not any(k in kinds for k in "is")  # an op that takes no integers: operands made floats
    # an op that takes no floats: integers (and bools, where it takes them) only
    integers = None if any(k in kinds for k in "fc") else "iu" + ("b" if "p" in kinds else "")
    make = _elementwise_binary if len(row.op.definition.operands) == 2 else _elementwise_unary
    return make(np_fn, hlo, to_float, integers)


ELEMENTWISE_FUNCTIONS = {row.lnp: elementwise_function(row) for row in elementwise.OPS
                         if row.lnp is not None and row.lnp not in WRITTEN_BY_HAND}
globals().update(ELEMENTWISE_FUNCTIONS)
# the ones the functions below are written with
add, subtract, multiply, maximum, minimum, power, negative, exp, expm1, log, log1p, sqrt, sin, cos, tan, tanh, \
    arctan2, nextafter, bitwise_and, bitwise_or, invert, left_shift = (
        ELEMENTWISE_FUNCTIONS[name] for name in ("add", "subtract", "multiply", "maximum", "minimum", "power",
                                                 "negative", "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos",
                                                 "tan", "tanh", "arctan2", "nextafter", "bitwise_and", "bitwise_or",
                                                 "invert", "left_shift"))


def _comparison(np_fn: Callable, direction: str) -> Callable[[ArrayLike, ArrayLike], Any]:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        trace = _trace_of(x, y)
        if trace is None:
            return np_fn(x, y)
        a, b = _promote(trace, x, y)
        return Tracer(stablehlo.compare(trace.emit(), a.value, b.value, direction), trace)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}` (a bool array)."
    return fn


_abs = _elementwise_unary(np.abs, stablehlo.abs_)


def abs(x: ArrayLike) -> Any:  # noqa: A001 - numpy's name
    """Elementwise absolute value (unsigned integers and bools are returned unchanged)."""
    if isinstance(x, Tracer) and x.dtype.kind in "ub":
        return x
    return _abs(x)


absolute = abs


less = _comparison(np.less, "LT")


less_equal = _comparison(np.less_equal, "LE")


greater = _comparison(np.greater, "GT")


greater_equal = _comparison(np.greater_equal, "GE")


equal = _comparison(np.equal, "EQ")


not_equal = _comparison(np.not_equal, "NE")


def divide(x: ArrayLike, y: ArrayLike) -> Any:
    """True division; integer operands give float32 (as JAX)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.divide(x, y)
    d, weak = promote_types(scalar_dtype(x), scalar_dtype(y))
    a, b = _promote(trace, x, y, dtype=_floating(d))
    return Tracer(stablehlo.divide(trace.emit(), a.value, b.value), trace, weak and is_floating(d))


true_divide = divide


_floor = _elementwise_unary(np.floor, stablehlo.floor)


_ceil = _elementwise_unary(np.ceil, stablehlo.ceil)


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
    return exp(multiply(x if is_floating(x.dtype) else lax_numpy.astype(x, np.float32), float(np.log(2.0))))


def isinf(x: ArrayLike) -> Any:
    """Elementwise: is positive or negative infinity."""
    if not isinstance(x, Tracer):
        return np.isinf(x)
    if not is_floating(x.dtype):
        return Tracer(x.trace.constant(np.asarray(False), shape=x.shape), x.trace)
    return equal(abs(x), np.inf)


def _rem(trace: Any, a: Tracer, b: Tracer) -> Tracer:
    return Tracer(stablehlo.remainder(trace.emit(), a.value, b.value), trace, a.weak and b.weak)


def remainder(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise remainder with the sign of the divisor, as `numpy.remainder` (`%`)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.remainder(x, y)
    a, b = _promote(trace, x, y)
    if b.dtype.kind in "iub":  # as JAX: an integer remainder by zero is 0
        b = lax_numpy.where(equal(b, 0), filled_like(b, 1), b)
    r = _rem(trace, a, b)
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(b, 0)))
    return lax_numpy.where(fix, add(r, b), r)


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
        return lax_numpy.where(fix, subtract(q, 1), q)
    # floats, as JAX: (x - fmod(x, y)) / y, corrected, then rounded
    div = divide(lax_numpy.where(equal(b, 0), a, subtract(a, r)), b)  # x // 0 is +-inf (or nan), as JAX
    div = lax_numpy.where(fix, subtract(div, 1.0), div)
    fl = floor(div)
    fl = lax_numpy.where(greater(subtract(div, fl), 0.5), add(fl, 1.0), fl)
    return lax_numpy.where(not_equal(div, 0), fl, multiply(0.0, divide(a, b)))


def _unary_tracer(x: Tracer, fn: Any) -> Tracer:
    return Tracer(fn(x.trace.emit(), x.value), x.trace, x.weak)


def sign(x: ArrayLike) -> Any:
    """Elementwise sign (-1, 0 or 1; NaN stays NaN); bools are their own sign."""
    if not isinstance(x, Tracer):
        return np.sign(x)
    if x.dtype.kind == "b":
        return x
    if x.dtype.kind == "u":
        return lax_numpy.astype(not_equal(x, 0), x.dtype)
    return _unary_tracer(x, stablehlo.sign)


def round(x: ArrayLike, decimals: int = 0) -> Any:  # noqa: A001 - numpy's name
    """Round half to even, as `numpy.round` (integers are returned unchanged when `decimals >= 0`)."""
    if not isinstance(x, Tracer):
        return np.round(x, decimals)
    if x.dtype.kind == "b":  # as JAX
        raise ValueError(f"round: data type bool is not inexact (at {user_line()})")
    if x.dtype.kind in "iu":
        if decimals < 0:  # as JAX
            raise NotImplementedError(f"round: integer rounding to decimals={decimals} < 0 is not implemented "
                                      f"(at {user_line()})")
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
    return lax_numpy.where(not_equal(delta, delta), add(a, b), out)


def _logical_binary(np_fn: Any, hlo_fn: Any) -> Any:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        trace = _trace_of(x, y)
        if trace is None:
            return np_fn(x, y)
        a = as_bool(_lift(trace, x))
        b = as_bool(_lift(trace, y))
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
    return Tracer(stablehlo.not_(x.trace.emit(), as_bool(x).value), x.trace)


def isneginf(x: ArrayLike) -> Any:
    """Whether each element is -inf."""
    return logical_and(isinf(x), x < 0)


def isposinf(x: ArrayLike) -> Any:
    """Whether each element is +inf."""
    return logical_and(isinf(x), x > 0)


def divmod(a: ArrayLike, b: ArrayLike) -> tuple[Any, Any]:  # noqa: A001 - NumPy's name
    """(floor_divide(a, b), remainder(a, b))."""
    return floor_divide(a, b), remainder(a, b)


# Cephes' Chebyshev coefficients for exp(-x) I0(x) on [0, 8] and for exp(-x) sqrt(x) I0(x) on (8, inf),
# the ones NumPy's i0 uses
_I0A = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
    -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
    -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
    -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
    -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877, -0.3046826723431984,
    0.6767952744094761
)


_I0B = (
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
    -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
    1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
    2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088
)


def _chbevl(x: Any, coefficients: Sequence[float]) -> Any:
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return (b0 - b2) * 0.5


def i0(x: ArrayLike) -> Any:
    """The modified Bessel function of the first kind, order 0, elementwise (float32 for integer
    input, as JAX), by Cephes' Chebyshev expansions as NumPy."""
    if not is_traced(x):
        return np.i0(x)
    if dtype_of(x).kind in "biu":
        x = lax_numpy.astype(x, np.float32)
    ax = abs(x)
    small = ax <= 8.0
    # each branch sees only arguments in its own range, so neither makes NaN or inf (nor their gradients)
    a = lax_numpy.where(small, ax, 8.0)
    b = lax_numpy.where(small, 9.0, ax)
    return lax_numpy.where(
        small, exp(a) * _chbevl(a / 2.0 - 2.0, _I0A), exp(b) * _chbevl(32.0 / b - 2.0, _I0B) / sqrt(b)
    )


def spacing(x: ArrayLike, /) -> Any:
    """The distance from each element to the next representable number away from zero (negative
    for negative `x`; the smallest subnormal at zero, NaN at infinities)."""
    if not is_traced(x):
        return np.spacing(x)
    if dtype_of(x).kind in "biu":
        x = lax_numpy.astype(x, np.float32)
    return nextafter(x, lax_numpy.where(x < 0, -np.inf, np.inf)) - x


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """NaN replaced by `nan`, infinities by `posinf`/`neginf` (the dtype's extremes by default)."""
    if not isinstance(x, Tracer):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if not is_floating(x.dtype):
        return x
    info = scalar_types.finfo(x.dtype)
    x = lax_numpy.where(isnan(x), nan, x)
    x = lax_numpy.where(logical_and(isinf(x), less(0, x)), info.max if posinf is None else posinf, x)
    return lax_numpy.where(logical_and(isinf(x), less(x, 0)), info.min if neginf is None else neginf, x)


_LN2 = float(np.log(2.0))


def _float_tracer(x: Tracer) -> Tracer:
    """`x` converted to a float dtype (ints and bools become float32), keeping its weakness."""
    return _lift(x.trace, x, _floating(x.dtype), x.weak)


def _float_pair(x: ArrayLike, y: ArrayLike) -> tuple[Tracer, Tracer]:
    """`x` and `y` promoted together and broadcast, then converted to a float dtype."""
    trace = _trace_of(x, y)
    a, b = _promote(trace, x, y)
    return _float_tracer(a), _float_tracer(b)


def _widened(body: Any, *xs: Tracer) -> Tracer:
    """`body(*xs)`, computed in float32 for float16 and bfloat16 operands (as XLA expands
    half-precision math)."""
    if xs[0].dtype.itemsize >= 4:
        return body(*xs)
    out = body(*(_lift(x.trace, x, np.dtype(np.float32), x.weak) for x in xs))
    return _lift(out.trace, out, xs[0].dtype, out.weak)


def _unary_float(np_fn: Any, body: Any, doc: str) -> Any:
    """A float-valued unary function: NumPy on plain arrays, `body(float tracer)` when traced."""
    def fn(x: ArrayLike) -> Any:
        if not isinstance(x, Tracer):
            return np_fn(x)
        return _widened(body, _float_tracer(x))
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = doc
    return fn


def _binary_float(np_fn: Any, body: Any, doc: str) -> Any:
    """A float-valued binary function: NumPy on plain arrays, `body(a, b)` on promoted float tracers."""
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        if _trace_of(x, y) is None:
            return np_fn(x, y)
        return _widened(body, *_float_pair(x, y))
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = doc
    return fn


sinh = _unary_float(np.sinh, lax_special.sinh, "Elementwise hyperbolic sine (as `(expm1(x) - expm1(-x)) / 2`).")


cosh = _unary_float(np.cosh, lax_special.cosh, "Elementwise hyperbolic cosine.")


arcsin = _unary_float(np.arcsin, lax_special.asin,
                      "Elementwise inverse sine, in `[-pi/2, pi/2]` (NaN outside `[-1, 1]`).")


arccos = _unary_float(np.arccos, lax_special.acos,
                      "Elementwise inverse cosine, in `[0, pi]` (NaN outside `[-1, 1]`).")


arctan = _unary_float(np.arctan, lax_special.atan, "Elementwise inverse tangent, in `[-pi/2, pi/2]`.")


arcsinh = _unary_float(np.arcsinh, lax_special.asinh, "Elementwise inverse hyperbolic sine.")


arccosh = _unary_float(np.arccosh, lax_special.acosh, "Elementwise inverse hyperbolic cosine (NaN below 1).")


arctanh = _unary_float(np.arctanh, lax_special.atanh, "Elementwise inverse hyperbolic tangent (NaN outside `[-1, 1]`).")


def _sinc(x: Tracer) -> Tracer:
    px = multiply(x, float(np.pi))
    zero = equal(x, 0)
    safe = lax_numpy.where(zero, 1.0, px)
    # at 0 the Maclaurin series keeps the first derivatives right (as JAX)
    series = add(1.0, multiply(multiply(px, px), add(-1.0 / 6.0, multiply(multiply(px, px), 1.0 / 120.0))))
    return lax_numpy.where(zero, series, divide(sin(safe), safe))


sinc = _unary_float(np.sinc, _sinc, "Elementwise normalized sinc, `sin(pi x) / (pi x)` (1 at 0).")


deg2rad = _unary_float(np.deg2rad, lambda x: multiply(x, float(np.pi / 180.0)), "Degrees to radians.")


rad2deg = _unary_float(np.rad2deg, lambda x: multiply(x, float(180.0 / np.pi)), "Radians to degrees.")


radians, degrees = deg2rad, rad2deg


fabs = _unary_float(np.fabs, abs, "Elementwise absolute value as a float (integers give float32).")


cbrt = _unary_float(np.cbrt, lambda x: Tracer(stablehlo.cbrt(x.trace.emit(), x.value), x.trace, x.weak),
                    "Elementwise real cube root (negative for negative `x`).")


def _hypot(a: Tracer, b: Tracer) -> Tracer:
    a, b = abs(a), abs(b)
    hi, lo = maximum(a, b), minimum(a, b)
    zero = equal(hi, 0)
    safe = lax_numpy.where(zero, 1.0, hi)
    ratio = divide(lo, safe)
    return lax_numpy.where(zero, lo, multiply(safe, sqrt(add(1.0, multiply(ratio, ratio)))))


hypot = _binary_float(np.hypot, _hypot, "Elementwise `sqrt(x**2 + y**2)`, without overflow for large operands.")


logaddexp2 = _binary_float(np.logaddexp2, lambda a, b: divide(logaddexp(multiply(a, _LN2), multiply(b, _LN2)), _LN2),
                           "`log2(2**x + 2**y)`, computed stably.")


float_power = _binary_float(np.float_power, power,
                            "`x ** y` in a float dtype; NumPy uses float64, this the promoted float dtype (as JAX).")


def _heaviside(a: Tracer, b: Tracer) -> Tracer:
    return lax_numpy.where(less(a, 0), 0.0, lax_numpy.where(greater(a, 0), 1.0, b))


heaviside = _binary_float(np.heaviside, _heaviside, "Elementwise step: 0 below 0, `x2` at 0, 1 above.")


def signbit(x: ArrayLike) -> Any:
    """Elementwise: the sign bit is set (true for -0.0 and negative NaNs)."""
    if not isinstance(x, Tracer):
        return np.signbit(x)
    if x.dtype.kind in "ub":
        return Tracer(x.trace.constant(np.asarray(False), shape=x.shape), x.trace)
    if x.dtype.kind == "i":
        return less(x, 0)
    as_int = np.dtype(f"int{x.dtype.itemsize * 8}")
    bits = Tracer(stablehlo.bitcast_convert(x.trace.emit(), x.value, tensor_type(x.shape, as_int)), x.trace)
    return less(bits, 0)


def copysign(x: ArrayLike, y: ArrayLike) -> Any:
    """`|x|` with the sign of `y` (float results; integers give float32, as JAX)."""
    if _trace_of(x, y) is None:
        return np.copysign(x, y)
    a, b = _float_pair(x, y)
    mag = abs(a)
    return lax_numpy.where(signbit(b), negative(mag), mag)


def positive(x: ArrayLike) -> Any:
    """Elementwise `+x` (the same values and dtype)."""
    if not isinstance(x, Tracer):
        return np.positive(x)
    return x


def conjugate(x: ArrayLike) -> Any:
    """Complex conjugate; real inputs are returned unchanged."""
    if not isinstance(x, Tracer):
        return np.conjugate(x)
    if x.dtype.kind != "c":
        return x
    return Tracer(chlo.ConjOp.build(x.trace.emit(), x.value).results[0], x.trace, x.weak)


conj = conjugate


def real(x: ArrayLike) -> Any:
    """The real part (real inputs are returned unchanged)."""
    if not isinstance(x, Tracer):
        return np.real(x)
    if x.dtype.kind != "c":
        return x
    return Tracer(stablehlo.real(x.trace.emit(), x.value), x.trace, x.weak)


def imag(x: ArrayLike) -> Any:
    """The imaginary part (zeros of the same dtype for real inputs)."""
    if not isinstance(x, Tracer):
        return np.imag(x)
    if x.dtype.kind != "c":
        return Tracer(x.trace.constant(np.asarray(0, dtype=x.dtype), shape=x.shape), x.trace, x.weak)
    return Tracer(stablehlo.imag(x.trace.emit(), x.value), x.trace, x.weak)


def angle(x: ArrayLike, deg: bool = False) -> Any:
    """The complex argument; for real inputs `pi` where negative, else 0 (float results)."""
    if not isinstance(x, Tracer):
        return np.angle(x, deg=deg)
    if x.dtype.kind == "c":
        out = arctan2(imag(x), real(x))
    else:
        xf = _float_tracer(x)
        out = arctan2(imag(xf), xf)
    return multiply(out, float(180.0 / np.pi)) if deg else out


def trunc(x: ArrayLike) -> Any:
    """Round towards zero; integers and bools are returned unchanged (as JAX)."""
    if not isinstance(x, Tracer):
        return np.trunc(x)
    if x.dtype.kind in "iub":
        return x
    return lax_numpy.where(less(x, 0), ceil(x), floor(x))


fix = trunc


def modf(x: ArrayLike) -> tuple[Any, Any]:
    """The fractional and integral parts of `x`, both with its sign (float results)."""
    if not isinstance(x, Tracer):
        return np.modf(x)
    xf = _float_tracer(x)
    whole = trunc(xf)
    return subtract(xf, whole), whole


def frexp(x: ArrayLike) -> tuple[Any, Any]:
    """Mantissa in `[0.5, 1)` (signed) and int32 exponent with `x == m * 2**e`, from the float's
    bits; zeros, infinities and NaNs give `(x, 0)`. Integers give a float32 mantissa (as JAX)."""
    if not isinstance(x, Tracer):
        return np.frexp(x)
    xf = _float_tracer(x)
    info = scalar_types.finfo(xf.dtype)
    width = xf.dtype.itemsize * 8
    as_int = np.dtype(f"int{width}")
    nmant, bias = int(info.nmant), int(info.maxexp) - 2  # a mantissa in [0.5, 1) has exponent field `bias`
    # subnormals: scale into the normal range first
    subnormal = logical_and(less(abs(xf), float(info.tiny)), not_equal(xf, 0))
    scaled = lax_numpy.where(subnormal, multiply(xf, float(2.0 ** (nmant + 1))), xf)
    b = xf.trace.emit()
    bits = Tracer(stablehlo.bitcast_convert(b, scaled.value, tensor_type(xf.shape, as_int)), xf.trace)
    field_mask = (1 << (width - 1 - nmant)) - 1
    field = bitwise_and(right_shift(bits, nmant), field_mask)
    exponent = subtract(lax_numpy.astype(field, np.int32), bias)
    exponent = lax_numpy.where(subnormal, subtract(exponent, nmant + 1), exponent)
    cleared = bitwise_and(bits, int(np.array(~(field_mask << nmant), dtype=as_int)))
    mbits = bitwise_or(cleared, int(bias << nmant))
    mant = Tracer(stablehlo.bitcast_convert(xf.trace.emit(), mbits.value, tensor_type(xf.shape, xf.dtype)), xf.trace,
                  xf.weak)
    special = logical_or(equal(xf, 0), logical_not(isfinite(xf)))
    return lax_numpy.where(special, xf, mant), lax_numpy.where(special, 0, exponent)


def fmax(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise maximum that ignores NaNs (NaN only where both are NaN)."""
    if _trace_of(x, y) is None:
        return np.fmax(x, y)
    return lax_numpy.where(logical_or(greater(x, y), isnan(y)), x, y)


def fmin(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise minimum that ignores NaNs (NaN only where both are NaN)."""
    if _trace_of(x, y) is None:
        return np.fmin(x, y)
    return lax_numpy.where(logical_or(less(x, y), isnan(y)), x, y)


def ldexp(x: ArrayLike, n: ArrayLike) -> Any:
    """`x * 2**n` for integer `n` (float results; integer `x` gives float32)."""
    trace = _trace_of(x, n)
    if trace is None:
        return np.ldexp(x, n)
    if np.dtype(n.dtype if isinstance(n, Tracer) else np.asarray(n).dtype).kind not in "iub":
        raise TypeError(f"ldexp: the exponent `n` must be an integer array, got {n.dtype} (at {user_line()})")
    xf = _float_tracer(_lift(trace, x))
    d = xf.dtype
    return multiply(xf, power(_lift(trace, 2.0, d, True), lax_numpy.astype(n, d)))


def _integer_pair(name: str, x: ArrayLike, y: ArrayLike) -> tuple[Tracer, Tracer]:
    a, b = _promote(_trace_of(x, y), x, y)
    _require_integers(name, a.dtype, "iu")
    return a, b


bitwise_not = bitwise_invert = invert


def right_shift(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x >> y` of integers: arithmetic for signed, logical for unsigned dtypes."""
    if _trace_of(x, y) is None:
        return np.right_shift(x, y)
    a, b = _integer_pair("right_shift", x, y)
    hlo = stablehlo.shift_right_arithmetic if a.dtype.kind == "i" else stablehlo.shift_right_logical
    return Tracer(hlo(a.trace.emit(), a.value, b.value), a.trace, a.weak and b.weak)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x: ArrayLike) -> Any:
    """The number of set bits of each integer's absolute value (uint8, as numpy and JAX)."""
    if not isinstance(x, Tracer):
        return np.bitwise_count(x)
    if x.dtype.kind not in "iub":
        raise TypeError(f"bitwise_count: `x` must be integers, got {x.dtype} (at {user_line()})")
    a = abs(x) if x.dtype.kind == "i" else x
    return lax_numpy.astype(Tracer(stablehlo.popcnt(x.trace.emit(), a.value), x.trace), np.uint8)


def gcd(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise greatest common divisor of integers (non-negative), by Euclid's algorithm in a
    `stablehlo.while`."""
    if _trace_of(x, y) is None:
        return np.gcd(x, y)
    a, b = _integer_pair("gcd", x, y)
    a, b = abs(a), abs(b)

    def body(carry: tuple) -> tuple:
        p, q = carry
        nonzero = not_equal(q, 0)
        return lax_numpy.where(nonzero, q, p), lax_numpy.where(nonzero, remainder(p, lax_numpy.where(nonzero, q, 1)), 0)

    out, _ = lax.while_loop(lambda c: _any(not_equal(c[1], 0)), body, (a, b))
    return out


def _any(x: Tracer) -> Tracer:
    return reductions.any(x)


def lcm(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise least common multiple of integers (non-negative; 0 if either is 0)."""
    if _trace_of(x, y) is None:
        return np.lcm(x, y)
    a, b = _integer_pair("lcm", x, y)
    g = gcd(a, b)
    zero = equal(g, 0)
    q = Tracer(stablehlo.divide(a.trace.emit(), abs(a).value, lax_numpy.where(zero, 1, g).value), a.trace, a.weak)
    return lax_numpy.where(zero, 0, abs(multiply(q, b)))


# the array API's names
asin, acos, atan = arcsin, arccos, arctan


asinh, acosh, atanh = arcsinh, arccosh, arctanh


atan2 = arctan2


_power = power


def power(x: ArrayLike, y: ArrayLike) -> Any:
    """`x ** y` elementwise; as JAX, a bool base with a Python int exponent is taken as int32 (jax's
    `to_numeric_dtype`), 64-bit values enabled or not."""
    if isinstance(y, int) and not isinstance(y, bool) and dtype_of(x) == np.bool_:
        x = lax_numpy.astype(x, np.int32)
    return _power(x, y)


pow = power  # noqa: A001 - the array API's name


__all__ = sorted(set([
    "abs", "absolute", "acos", "acosh", "add", "angle", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctan2", "arctanh", "around", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_count",
    "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "cbrt", "ceil", "clip", "conj", "conjugate", "copysign", "cos", "cosh", "deg2rad", "degrees", "divide",
    "divmod", "equal", "exp", "exp2", "expm1", "fabs", "fix", "float_power", "floor", "floor_divide", "fmax",
    "fmin", "fmod", "frexp", "gcd", "greater", "greater_equal", "heaviside", "hypot", "i0", "imag", "invert",
    "isfinite", "isinf", "isnan", "isneginf", "isposinf", "lcm", "ldexp", "left_shift", "less", "less_equal", "log",
    "log10", "log1p", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor",
    "maximum", "minimum", "mod", "modf", "multiply", "nan_to_num", "negative", "nextafter", "not_equal", "positive",
    "pow", "power", "rad2deg", "radians", "real", "reciprocal", "remainder", "right_shift", "rint", "round", "sign",
    "signbit", "sin", "sinc", "sinh", "spacing", "sqrt", "square", "subtract", "tan", "tanh", "true_divide",
    "trunc"]) | set(ELEMENTWISE_FUNCTIONS))
