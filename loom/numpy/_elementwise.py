"""The rest of `loom.numpy`'s elementwise math: inverse and hyperbolic trigonometry, `hypot`,
`cbrt`, sign manipulation, rounding, `fmax`/`fmin`/`fmod`, `ldexp`, `gcd`/`lcm`, bitwise
operations and shifts, and the array-API aliases. Inside `loom.jit` each lowers to StableHLO ops
that have differentiation and batching rules (compositions of them where StableHLO has no single
op), so all of them are differentiable to any order; on plain arrays they run NumPy directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.frontend.tracing import Tracer, tensor_type, user_line
from loom.lax import special as lax_special
from loom.numpy import (
    ArrayLike,
    _floating,
    _lift,
    _promote,
    _trace_of,
    abs,
    add,
    astype,
    divide,
    equal,
    finfo,
    greater,
    less,
    maximum,
    minimum,
    multiply,
    negative,
    power,
    sin,
    sqrt,
    subtract,
    where,
)
from loom.numpy._more import (
    _rem,
    arctan2,
    ceil,
    floor,
    isfinite,
    isnan,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    not_equal,
    remainder,
)

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


# --- trigonometric and hyperbolic -----------------------------------------------------------------


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
    safe = where(zero, 1.0, px)
    # at 0 the Maclaurin series keeps the first derivatives right (as JAX)
    series = add(1.0, multiply(multiply(px, px), add(-1.0 / 6.0, multiply(multiply(px, px), 1.0 / 120.0))))
    return where(zero, series, divide(sin(safe), safe))


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
    safe = where(zero, 1.0, hi)
    ratio = divide(lo, safe)
    return where(zero, lo, multiply(safe, sqrt(add(1.0, multiply(ratio, ratio)))))


hypot = _binary_float(np.hypot, _hypot, "Elementwise `sqrt(x**2 + y**2)`, without overflow for large operands.")
logaddexp2 = _binary_float(np.logaddexp2, lambda a, b: divide(logaddexp(multiply(a, _LN2), multiply(b, _LN2)), _LN2),
                           "`log2(2**x + 2**y)`, computed stably.")
float_power = _binary_float(np.float_power, power,
                            "`x ** y` in a float dtype; NumPy uses float64, this the promoted float dtype (as JAX).")


def _heaviside(a: Tracer, b: Tracer) -> Tracer:
    return where(less(a, 0), 0.0, where(greater(a, 0), 1.0, b))


heaviside = _binary_float(np.heaviside, _heaviside, "Elementwise step: 0 below 0, `x2` at 0, 1 above.")


# --- signs ----------------------------------------------------------------------------------------


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
    return where(signbit(b), negative(mag), mag)


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
    from loom.dialects import chlo
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


# --- rounding and remainders ---------------------------------------------------------------------


def trunc(x: ArrayLike) -> Any:
    """Round towards zero; integers and bools are returned unchanged (as JAX)."""
    if not isinstance(x, Tracer):
        return np.trunc(x)
    if x.dtype.kind in "iub":
        return x
    return where(less(x, 0), ceil(x), floor(x))


fix = trunc


def rint(x: ArrayLike) -> Any:
    """Round half to even; integers give float32 (as JAX)."""
    if not isinstance(x, Tracer):
        return np.rint(x)
    xf = _float_tracer(x)
    return Tracer(stablehlo.round_nearest_even(x.trace.emit(), xf.value), x.trace, xf.weak)


def fmod(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise C `fmod`: the remainder with the sign of the dividend."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.fmod(x, y)
    a, b = _promote(trace, x, y)
    return _rem(trace, a, b)


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
    info = finfo(xf.dtype)
    width = xf.dtype.itemsize * 8
    as_int = np.dtype(f"int{width}")
    nmant, bias = int(info.nmant), int(info.maxexp) - 2  # a mantissa in [0.5, 1) has exponent field `bias`
    # subnormals: scale into the normal range first
    subnormal = logical_and(less(abs(xf), float(info.tiny)), not_equal(xf, 0))
    scaled = where(subnormal, multiply(xf, float(2.0 ** (nmant + 1))), xf)
    b = xf.trace.emit()
    bits = Tracer(stablehlo.bitcast_convert(b, scaled.value, tensor_type(xf.shape, as_int)), xf.trace)
    field_mask = (1 << (width - 1 - nmant)) - 1
    field = bitwise_and(right_shift(bits, nmant), field_mask)
    exponent = subtract(astype(field, np.int32), bias)
    exponent = where(subnormal, subtract(exponent, nmant + 1), exponent)
    cleared = bitwise_and(bits, int(np.array(~(field_mask << nmant), dtype=as_int)))
    mbits = bitwise_or(cleared, int(bias << nmant))
    mant = Tracer(stablehlo.bitcast_convert(xf.trace.emit(), mbits.value, tensor_type(xf.shape, xf.dtype)), xf.trace,
                  xf.weak)
    special = logical_or(equal(xf, 0), logical_not(isfinite(xf)))
    return where(special, xf, mant), where(special, 0, exponent)


def fmax(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise maximum that ignores NaNs (NaN only where both are NaN)."""
    if _trace_of(x, y) is None:
        return np.fmax(x, y)
    return where(logical_or(greater(x, y), isnan(y)), x, y)


def fmin(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise minimum that ignores NaNs (NaN only where both are NaN)."""
    if _trace_of(x, y) is None:
        return np.fmin(x, y)
    return where(logical_or(less(x, y), isnan(y)), x, y)


def ldexp(x: ArrayLike, n: ArrayLike) -> Any:
    """`x * 2**n` for integer `n` (float results; integer `x` gives float32)."""
    trace = _trace_of(x, n)
    if trace is None:
        return np.ldexp(x, n)
    if np.dtype(n.dtype if isinstance(n, Tracer) else np.asarray(n).dtype).kind not in "iub":
        raise TypeError(f"ldexp: the exponent `n` must be an integer array, got {n.dtype} (at {user_line()})")
    xf = _float_tracer(_lift(trace, x))
    d = xf.dtype
    return multiply(xf, power(_lift(trace, 2.0, d, True), astype(n, d)))


def nextafter(x: ArrayLike, y: ArrayLike) -> Any:
    """The next representable float after `x` towards `y` (`chlo.next_after`; not differentiable)."""
    if _trace_of(x, y) is None:
        return np.nextafter(x, y)
    from loom.dialects import chlo
    a, b = _float_pair(x, y)
    return Tracer(chlo.NextAfterOp.build(a.trace.emit(), a.value, b.value).results[0], a.trace, a.weak and b.weak)


# --- integers --------------------------------------------------------------------------------------


def _integer_pair(name: str, x: ArrayLike, y: ArrayLike, bools: bool) -> tuple[Tracer, Tracer]:
    trace = _trace_of(x, y)
    a, b = _promote(trace, x, y)
    if a.dtype.kind not in ("iub" if bools else "iu"):
        raise TypeError(f"{name}: arguments must be integers{' or bools' if bools else ''}, got {a.dtype} "
                        f"(at {user_line()})")
    return a, b


def _bitwise(np_fn: Any, hlo_fn: Any, name: str) -> Any:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        if _trace_of(x, y) is None:
            return np_fn(x, y)
        a, b = _integer_pair(name, x, y, True)
        return Tracer(hlo_fn(a.trace.emit(), a.value, b.value), a.trace, a.weak and b.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}` of integers or bools."
    return fn


bitwise_and = _bitwise(np.bitwise_and, stablehlo.and_, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, stablehlo.or_, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, stablehlo.xor, "bitwise_xor")


def invert(x: ArrayLike) -> Any:
    """Elementwise bitwise NOT of integers (logical NOT of bools)."""
    if not isinstance(x, Tracer):
        return np.invert(x)
    if x.dtype.kind not in "iub":
        raise TypeError(f"invert: `x` must be integers or bools, got {x.dtype} (at {user_line()})")
    return Tracer(stablehlo.not_(x.trace.emit(), x.value), x.trace, x.weak)


bitwise_not = bitwise_invert = invert


def left_shift(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x << y` of integers (0 when `y` is at least the bit width, as XLA)."""
    if _trace_of(x, y) is None:
        return np.left_shift(x, y)
    a, b = _integer_pair("left_shift", x, y, False)
    return Tracer(stablehlo.shift_left(a.trace.emit(), a.value, b.value), a.trace, a.weak and b.weak)


def right_shift(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x >> y` of integers: arithmetic for signed, logical for unsigned dtypes."""
    if _trace_of(x, y) is None:
        return np.right_shift(x, y)
    a, b = _integer_pair("right_shift", x, y, False)
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
    return astype(Tracer(stablehlo.popcnt(x.trace.emit(), a.value), x.trace), np.uint8)


def gcd(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise greatest common divisor of integers (non-negative), by Euclid's algorithm in a
    `stablehlo.while`."""
    if _trace_of(x, y) is None:
        return np.gcd(x, y)
    from loom import lax
    a, b = _integer_pair("gcd", x, y, False)
    a, b = abs(a), abs(b)

    def body(carry: tuple) -> tuple:
        p, q = carry
        nonzero = not_equal(q, 0)
        return where(nonzero, q, p), where(nonzero, remainder(p, where(nonzero, q, 1)), 0)

    out, _ = lax.while_loop(lambda c: _any(not_equal(c[1], 0)), body, (a, b))
    return out


def _any(x: Tracer) -> Tracer:
    from loom.numpy._more import any as any_
    return any_(x)


def lcm(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise least common multiple of integers (non-negative; 0 if either is 0)."""
    if _trace_of(x, y) is None:
        return np.lcm(x, y)
    a, b = _integer_pair("lcm", x, y, False)
    g = gcd(a, b)
    zero = equal(g, 0)
    q = Tracer(stablehlo.divide(a.trace.emit(), abs(a).value, where(zero, 1, g).value), a.trace, a.weak)
    return where(zero, 0, abs(multiply(q, b)))


# the array API's names
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh
atan2 = arctan2
pow = power  # noqa: A001 - the array API's name

__all__ = [
    "acos", "acosh", "angle", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh", "atan",
    "atan2", "atanh", "bitwise_and", "bitwise_count", "bitwise_invert", "bitwise_left_shift", "bitwise_not",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "cbrt", "conj", "conjugate", "copysign", "cosh", "deg2rad",
    "degrees", "fabs", "fix", "float_power", "fmax", "fmin", "fmod", "frexp", "gcd", "heaviside", "hypot", "imag",
    "invert", "lcm", "ldexp", "left_shift", "logaddexp2", "modf", "nextafter", "positive", "pow", "rad2deg",
    "radians", "real", "right_shift", "rint", "signbit", "sinc", "sinh", "trunc",
]
