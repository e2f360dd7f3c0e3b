"""The elementwise family: StableHLO's and CHLO's unary and binary elementwise ops, one row each.

A row of `OPS` says everything loom knows about an op besides its declaration:

    Row(stablehlo.LogOp, numpy=float_math(np.log), torch=torch_function("log"),
        derivative=partials(lambda b, g, a: stablehlo.divide(b, g, a.x)), lax="log", lnp="log")

- `numpy`: the kernel maker of `KERNELS` (`ufunc(fn)`, `float_math(fn)`: computed in float32
  for f16/bf16 as XLA does, or a maker reading the op's attributes);
- `torch`: the maker of `TORCH_KERNELS`, resolved when first used (torch is imported then, not
  at `import loom`): `torch_function("log")` is `torch.log`, `torch_kernel("divide_kernel")` a
  maker of `loom.backend.kernels_torch`; ops without one run their numpy kernel on the tensors;
- `derivative`: ONE rule, both modes. `partials(d0, d1, ...)` gives, per operand, the derivative
  applied to a tangent `g` of the result's shape: `d(b, g, a) -> Value`, where `a.x`, `a.y`,
  `a.xs` are the operands (broadcast to the result's shape) and `a.z` the result. The partial is
  a diagonal linear map, so it is its own transpose: the JVP is the sum of `d_i(t_i)`, the VJP
  gives operand i the cotangent `d_i(ct)`, summed back to a scalar operand's shape (select and
  clamp take scalar operands). `None` marks an operand without a derivative (a predicate, an
  integer exponent), `unsupported(reason)` one whose derivative loom does not compute (an error
  when it is needed). `ZERO` is the derivative of a piecewise constant op (floor, sign, compare,
  ...): no tangent, no cotangent. A whole-op `unsupported(reason)` leaves the op out of both
  tables (declared, so the coverage test knows why);
- `lax`, `lnp`: the names of the op's `loom.lax` and `loom.numpy` functions (strings: the front end
  generates its bindings from them).

Batching and sharding need no row: every op with the `Elementwise` trait gets the elementwise
batching rule (registered below for each such op) and the identity sharding rule
(`loom.transforms.sharding_propagation.identity_rule`, read from the trait), and the compiled
executor's elementwise set is read from the trait.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.backend import kernels_numpy as kn
from loom.backend.common import TORCH_KERNELS, subbyte_integer
from loom.backend.kernels_numpy import KERNELS, Kernel
from loom.dialects import chlo, stablehlo
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ops.registry import Unsupported, declare, register, unsupported
from loom.transforms import autodiff, forward_ad
from loom.transforms.autodiff import VJP_RULES, full_like, is_float, reduce_sum
from loom.transforms.batching import BATCH_RULES, elementwise_rule
from loom.transforms.forward_ad import JVP_RULES

KernelMaker = Callable[[Operation], "Kernel | None"]


# --- kernels -------------------------------------------------------------------------------------

ufunc = kn.direct            # the numpy function itself, on operands of every dtype
float_math = kn.float_math   # computed in float32 for f16/bf16 operands


def torch_function(name: str, real_only: bool = False, dtypes: tuple | None = None) -> KernelMaker:
    """`torch.<name>` (dotted: `special.erf`); with `real_only`, complex operands take the numpy
    path, and so do operands of dtypes other than `dtypes` when given."""
    def make(op: Operation) -> Kernel | None:
        import torch  # optional: imported when a torch program is first compiled
        dt = kn.operand_dtype(op)
        if (real_only and dt.kind == "c") or (dtypes is not None and dt not in dtypes):
            return None
        fn: Any = torch
        for part in name.split("."):
            fn = getattr(fn, part)
        return Kernel(fn)
    make.__qualname__ = f"torch_function({name!r})"
    return make


def torch_kernel(maker_name: str) -> KernelMaker:
    """The kernel maker `maker_name` of `loom.backend.kernels_torch` (semantics torch lacks)."""
    def make(op: Operation) -> Kernel | None:
        from loom.backend import kernels_torch  # imports torch
        return getattr(kernels_torch, maker_name)(op)
    make.__qualname__ = f"torch_kernel({maker_name!r})"
    return make


def torch_loom_function(name: str, real_only: bool = False) -> KernelMaker:
    """A function of `loom.backend.kernels_torch` on tensors (torch has no such function)."""
    def make(op: Operation) -> Kernel | None:
        from loom.backend import kernels_torch  # imports torch
        if real_only and kn.operand_dtype(op).kind == "c":
            return None
        return Kernel(getattr(kernels_torch, name))
    make.__qualname__ = f"torch_loom_function({name!r})"
    return make


def on_own_bits(maker: KernelMaker, storage_extra: bool = False) -> KernelMaker:
    """`maker`'s kernel, whose operands, when sub-byte integers (i4 held in int8), are first
    masked to their own bits: so bit counts and logical shifts see the type's width, not the
    storage's. With `storage_extra`, the storage's extra leading bits are subtracted from the
    result (count_leading_zeros). The wrap after every op restores the sign."""
    def make(op: Operation) -> Kernel | None:
        k = maker(op)
        et = subbyte_integer(op.operands[0].type)
        if k is None or et is None:
            return k
        return Kernel(masked_call, (1 << et.width) - 1, 8 - et.width if storage_extra else 0, k, kn.ALL)
    make.__qualname__ = f"on_own_bits({getattr(maker, '__qualname__', maker)})"
    return make


def masked_call(mask: int, extra: int, k: Kernel, *xs: Any) -> Any:
    out = k([x & mask for x in xs])
    return out - extra if extra else out


def arithmetic_shift_of_own_width(maker: KernelMaker) -> KernelMaker:
    """shift_right_arithmetic's kernel, where an unsigned sub-byte operand (ui4 in uint8) shifts in
    copies of its own top bit, as XLA's ui4 does (8 >> 1 is 12)."""
    def make(op: Operation) -> Kernel | None:
        et = subbyte_integer(op.operands[0].type)
        if et is None or not et.is_unsigned:
            return maker(op)
        return Kernel(unsigned_arithmetic_shift, kn.ALL, et.width)
    make.__qualname__ = f"arithmetic_shift_of_own_width({getattr(maker, '__qualname__', maker)})"
    return make


def unsigned_arithmetic_shift(x: Any, s: Any, width: int) -> Any:
    """`x >> s` on `width`-bit patterns held in uint8 (numpy or torch), the top bit copied in:
    with t = 2^(width-1), the signed value is (x ^ t) - t; a shift by width or more is one by
    width - 1 (all copies of the top bit). The wrap after the op masks the result to width bits."""
    top = 1 << (width - 1)
    s = s.clip(0, width - 1)
    return ((x ^ top) >> s) - ((s * 0 + top) >> s)


def saturating_to_subbyte(maker: KernelMaker) -> KernelMaker:
    """convert's kernel, where a float converted to a sub-byte integer saturates at that type's
    bounds (XLA's i4 from 20.0 is 7), not at its storage's."""
    def make(op: Operation) -> Kernel | None:
        k = maker(op)
        et = subbyte_integer(op.results[0].type)
        if k is None or et is None or kn.operand_dtype(op).kind != "f":
            return k
        lo, hi = (0, (1 << et.width) - 1) if et.is_unsigned else (-(1 << (et.width - 1)), (1 << (et.width - 1)) - 1)
        return Kernel(clipped_call, float(lo), float(hi), k, kn.Operand(0))
    make.__qualname__ = f"saturating_to_subbyte({getattr(maker, '__qualname__', maker)})"
    return make


def clipped_call(lo: float, hi: float, k: Kernel, x: Any) -> Any:
    return k([x.clip(lo, hi)])  # NaN stays NaN (and converts to 0)


# --- derivatives ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class At:
    """Where a partial is taken: the op, its operands (broadcast to the result's shape) and result."""

    op: Operation
    xs: list[Value]
    z: Value

    @property
    def x(self) -> Value:
        return self.xs[0]

    @property
    def y(self) -> Value:
        return self.xs[1]


Partial = Callable[[Builder, Value, At], Value]


@dataclass(frozen=True)
class Partials:
    """Per operand, the derivative applied to a tangent (None: that operand has none;
    `unsupported(reason)`: differentiating with respect to it is an error)."""

    of: tuple[Partial | Unsupported | None, ...]


def partials(*of: Partial | Unsupported | None) -> Partials:
    return Partials(of)


def _refuse(transformation: type, name: str, op: Operation, i: int, why: Unsupported) -> Exception:
    return transformation(f"the {name} transformation has no rule for op '{op.name}' with respect to operand {i} "
                          f"(at {op.location}): {why.reason}")


class _Zero:
    def __repr__(self) -> str:
        return "ZERO"


ZERO = _Zero()  # piecewise constant: the derivative is zero everywhere it exists


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def _widen(b: Builder, v: Value, like: Value) -> Value:
    """A scalar operand (select's predicate, clamp's bounds) broadcast to the result's shape."""
    return v if _shape(v) == _shape(like) else stablehlo.broadcast_in_dim(b, v, _shape(like), [])


def _cast(b: Builder, v: Value, like: Value) -> Value:
    """`v` in the element type of `like` (convert's derivative crosses float types)."""
    et = like.type.element_type
    return v if v.type.element_type == et else stablehlo.convert(b, v, et)


def _at(b: Builder, op: Operation, xs: Sequence[Value]) -> At:
    z = op.results[0]
    return At(op, [_widen(b, x, z) for x in xs], z)


def _jvp_rule(derivative: Partials) -> Callable:
    """tangent = sum over operands of partial_i(t_i)."""
    def jvp(b: Builder, op: Operation, xs: list[Value], ts: list[Value | None]) -> list[Value | None]:
        z = op.results[0]
        if not is_float(z.type):
            return [None]
        active = [(d, t) for d, x, t in zip(derivative.of, xs, ts) if d is not None and t is not None
                  and is_float(x.type)]
        for i, (d, t) in enumerate(zip(derivative.of, ts)):
            if isinstance(d, Unsupported) and t is not None:
                raise _refuse(forward_ad.MissingRuleError, forward_ad.TRANSFORMATION, op, i, d)
        if not active:
            return [None]
        at = _at(b, op, xs)
        out = None
        for d, t in active:
            v = _cast(b, d(b, _widen(b, _cast(b, t, z), z), at), z)
            out = v if out is None else stablehlo.add(b, out, v)
        return [out]
    return jvp


def _vjp_rule(derivative: Partials) -> Callable:
    """The transpose of the JVP: operand i gets partial_i(ct), summed back to its shape."""
    def vjp(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
        g = cts[0]
        xs = list(op.operands)
        out: list[Value | None] = []
        at = None
        for i, (d, x) in enumerate(zip(derivative.of, xs)):
            if d is None or not is_float(x.type):
                out.append(None)
                continue
            if isinstance(d, Unsupported):
                if autodiff.is_active(x):
                    raise _refuse(autodiff.MissingRuleError, autodiff.TRANSFORMATION, op, i, d)
                out.append(None)
                continue
            at = at or _at(b, op, xs)
            v = _cast(b, d(b, _cast(b, g, at.z), at), x)
            if _shape(v) != _shape(x):
                v = reduce_sum(b, v, list(range(len(_shape(v)))))
            out.append(v)
        return out
    return vjp


def _zero_jvp(b: Builder, op: Operation, xs: list, ts: list) -> list[None]:
    return [None] * len(op.results)


def _zero_vjp(b: Builder, op: Operation, cts: list) -> list[None]:
    return [None] * len(op.operands)


# helpers for the partials below
def _c(b: Builder, value: float, like: Value) -> Value:
    return full_like(b, value, like)


def _mul(b: Builder, x: Value, y: Value) -> Value:
    return stablehlo.multiply(b, x, y)


def _div(b: Builder, x: Value, y: Value) -> Value:
    return stablehlo.divide(b, x, y)


def _neg(b: Builder, x: Value) -> Value:
    return stablehlo.negate(b, x)


def _chlo(b: Builder, cls: type, x: Value) -> Value:
    return cls.build(b, x).results[0]


def _where(b: Builder, pred: Value, on_true: Value, on_false: Value) -> Value:
    return stablehlo.select(b, pred, on_true, on_false)


def _cmp(b: Builder, x: Value, y: Value, direction: str) -> Value:
    return stablehlo.compare(b, x, y, direction)


def _balanced_eq(b: Builder, x: Value, z: Value, y: Value) -> Value:
    """1 where x == z != y, 0.5 where x == z == y, else 0 (JAX's tie splitting for max / min)."""
    inner = _where(b, _cmp(b, y, z, "EQ"), _c(b, 0.5, z), _c(b, 1, z))
    return _where(b, _cmp(b, x, z, "EQ"), inner, _c(b, 0, z))


def _power_x(b: Builder, g: Value, a: At) -> Value:
    """As JAX: y * x^(y-1), 0 where y == 0 (an integer exponent converted to x's type)."""
    x, y = a.xs
    y = _cast(b, y, x)
    dx = _mul(b, y, stablehlo.power(b, x, stablehlo.subtract(b, y, _c(b, 1, y))))
    return _mul(b, g, _where(b, _cmp(b, y, _c(b, 0, y), "EQ"), _c(b, 0, x), dx))


def _power_y(b: Builder, g: Value, a: At) -> Value:
    """As JAX: z * log(x), with log(1) where x == 0."""
    x = a.x
    safe_x = _where(b, _cmp(b, x, _c(b, 0, x), "EQ"), _c(b, 1, x), x)
    return _mul(b, g, _mul(b, a.z, stablehlo.log(b, safe_x)))


def _truncated_quotient(b: Builder, x: Value, y: Value) -> Value:
    q = _div(b, x, y)
    return _mul(b, stablehlo.sign(b, q), stablehlo.floor(b, stablehlo.abs_(b, q)))


def _atan2_denominator(b: Builder, a: At) -> Value:
    y, x = a.xs
    return stablehlo.add(b, _mul(b, x, x), _mul(b, y, y))


def _clamp_lo(b: Builder, g: Value, a: At) -> Value:
    """As JAX: the lower bound's tangent where it is active (and below the upper bound)."""
    lo, x, hi = a.xs
    active = stablehlo.and_(b, _cmp(b, lo, x, "GT"), _cmp(b, lo, hi, "LT"))
    return _where(b, active, g, _c(b, 0, g))


def _clamp_x(b: Builder, g: Value, a: At) -> Value:
    lo, x, hi = a.xs
    inside = stablehlo.and_(b, _cmp(b, x, lo, "GT"), _cmp(b, x, hi, "LT"))
    return _where(b, inside, g, _c(b, 0, g))


def _clamp_hi(b: Builder, g: Value, a: At) -> Value:
    lo, x, hi = a.xs
    return _where(b, _cmp(b, hi, x, "LT"), g, _c(b, 0, g))


def _gaussian(b: Builder, x: Value, scale: float) -> Value:
    """scale * exp(-x**2)."""
    return _mul(b, _c(b, scale, x), stablehlo.exponential(b, _neg(b, _mul(b, x, x))))


def _rsqrt(b: Builder, x: Value) -> Value:
    return stablehlo.rsqrt(b, x)


def _same_op(b: Builder, g: Value, a: At) -> Value:
    """The op itself on the tangent (a linear op with attributes: reduce_precision)."""
    return b.insert(a.op.clone({a.op.operands[0]: g})).results[0]


def _identity(b: Builder, g: Value, a: At) -> Value:
    return g


NO_COMPLEX = unsupported("complex values are not differentiated (no complex tangent or cotangent)")


# Hurwitz zeta (numpy has none): Euler-Maclaurin summation, as Cephes and XLA compute it.
_ZETA_TERMS = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
               -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
               1.8152105401943546773e17, -7.1661652561756670113e18)


def hurwitz_zeta(x: float, q: float) -> float:
    """zeta(x, q) = sum over k >= 0 of (k + q)^-x, for x > 1 (NaN below, inf at x = 1 and at q a
    non-positive integer)."""
    if x == 1.0:
        return math.inf
    if x < 1.0 or math.isnan(x) or math.isnan(q):
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan  # q^-x is not real
    if q > 1e8:  # the asymptotic expansion (DLMF 25.11.43)
        return (1 / (x - 1) + 1 / (2 * q)) * q ** (1 - x)
    eps = 2.0 ** -53
    s, a, b, i = q ** -x, q, 0.0, 0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < eps:
            return s
    w = a
    s += b * w / (x - 1.0) - 0.5 * b
    factor, k = 1.0, 0.0
    for term in _ZETA_TERMS:
        factor *= x + k
        b /= w
        t = factor * b / term
        s += t
        if abs(t / s) < eps:
            return s
        k += 1.0
        factor *= x + k
        b /= w
        k += 1.0
    return s


_hurwitz_zeta = np.frompyfunc(hurwitz_zeta, 2, 1)


def zeta(x, q):
    """Elementwise `hurwitz_zeta`, computed in float64."""
    dtype = np.result_type(x, q)
    return np.asarray(_hurwitz_zeta(np.asarray(x, np.float64), np.asarray(q, np.float64)), np.float64).astype(dtype)


# --- the table -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    op: type
    numpy: KernelMaker | Unsupported
    torch: KernelMaker | Unsupported | None
    derivative: Partials | _Zero | Unsupported
    lax: str | None = None
    lnp: str | None = None
    # The dtype kinds (numpy's letters: b, i, u, f, c) the `lax` binding accepts, where jax.lax's
    # differ from the op's own minus complex (the front end does not differentiate complex values).
    lax_dtypes: str | None = None

    @property
    def name(self) -> str:
        return self.op.name


S, C = stablehlo, chlo
OPS: list[Row] = [
    # StableHLO, unary
    Row(S.AbsOp, ufunc(np.abs), torch_kernel("abs_kernel"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.sign(b, a.x))), "abs", "abs"),
    Row(S.NegOp, ufunc(np.negative), torch_function("neg"), partials(lambda b, g, a: _neg(b, g)), "neg", "negative"),
    Row(S.SignOp, ufunc(kn.sign), torch_kernel("sign_kernel"), ZERO, "sign", "sign"),
    Row(S.FloorOp, ufunc(np.floor), torch_function("floor", real_only=True), ZERO, "floor", "floor"),
    Row(S.CeilOp, ufunc(np.ceil), torch_function("ceil", real_only=True), ZERO, "ceil", "ceil"),
    Row(S.RoundNearestEvenOp, ufunc(np.rint), torch_function("round", real_only=True), ZERO, "round", "rint"),
    Row(S.RoundOp, float_math(kn.round_nearest_afz), torch_loom_function("round_nearest_afz", True), ZERO,
        "round", None),
    Row(S.IsFiniteOp, ufunc(np.isfinite), torch_function("isfinite"), ZERO, "is_finite", "isfinite"),
    Row(S.NotOp, ufunc(np.invert), torch_function("bitwise_not"), ZERO, "bitwise_not", "invert"),
    Row(S.PopulationCountOp, on_own_bits(ufunc(kn.popcnt)), on_own_bits(torch_loom_function("popcnt")), ZERO,
        "population_count", "bitwise_count"),
    Row(S.CountLeadingZerosOp, on_own_bits(ufunc(kn.count_leading_zeros), True),
        on_own_bits(torch_loom_function("count_leading_zeros"), True), ZERO,
        "clz", None),
    Row(S.ExponentialOp, float_math(np.exp), torch_function("exp"), partials(lambda b, g, a: _mul(b, g, a.z)),
        "exp", "exp"),
    Row(S.ExponentialMinusOneOp, float_math(np.expm1), torch_function("expm1", real_only=True),
        partials(lambda b, g, a: _mul(b, g, stablehlo.add(b, a.z, _c(b, 1, a.z)))), "expm1", "expm1"),
    Row(S.LogOp, float_math(np.log), torch_function("log"), partials(lambda b, g, a: _div(b, g, a.x)), "log", "log"),
    Row(S.LogPlusOneOp, float_math(np.log1p), torch_function("log1p", real_only=True),
        partials(lambda b, g, a: _div(b, g, stablehlo.add(b, a.x, _c(b, 1, a.x)))), "log1p", "log1p"),
    Row(S.LogisticOp, float_math(kn.logistic), torch_function("sigmoid", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _mul(b, a.z, stablehlo.subtract(b, _c(b, 1, a.z), a.z)))),
        "logistic", None),
    Row(S.TanhOp, float_math(np.tanh), torch_function("tanh"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.subtract(b, _c(b, 1, a.z), _mul(b, a.z, a.z)))),
        "tanh", "tanh"),
    Row(S.SineOp, float_math(np.sin), torch_function("sin"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.cosine(b, a.x))), "sin", "sin"),
    Row(S.CosineOp, float_math(np.cos), torch_function("cos"),
        partials(lambda b, g, a: _neg(b, _mul(b, g, stablehlo.sine(b, a.x)))), "cos", "cos"),
    Row(S.TanOp, float_math(np.tan), torch_function("tan"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.add(b, _c(b, 1, a.z), _mul(b, a.z, a.z)))), "tan", "tan"),
    Row(S.SqrtOp, float_math(np.sqrt), torch_function("sqrt"),
        partials(lambda b, g, a: _div(b, g, _mul(b, a.z, _c(b, 2, a.z)))), "sqrt", "sqrt"),
    Row(S.RsqrtOp, float_math(kn.rsqrt), torch_function("rsqrt"),
        partials(lambda b, g, a: _mul(b, g, _mul(b, _div(b, a.z, a.x), _c(b, -0.5, a.z)))), "rsqrt", None),
    Row(S.CbrtOp, float_math(np.cbrt), torch_loom_function("cbrt", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _div(b, _c(b, 1, a.z), _mul(b, _c(b, 3, a.z), _mul(b, a.z, a.z))))),
        "cbrt", "cbrt"),
    Row(S.RealOp, ufunc(np.real), torch_kernel("real_imag_kernel"), NO_COMPLEX, "real", "real", "c"),
    Row(S.ImagOp, ufunc(np.imag), torch_kernel("real_imag_kernel"), NO_COMPLEX, "imag", "imag", "c"),
    Row(S.ConvertOp, saturating_to_subbyte(kn.convert_kernel), saturating_to_subbyte(torch_kernel("convert_kernel")),
        partials(_identity), "convert_element_type",
        "astype"),
    Row(S.ReducePrecisionOp, kn.reduce_precision_kernel, torch_kernel("reduce_precision_kernel"),
        partials(_same_op), "reduce_precision", None),
    # StableHLO, binary and ternary
    Row(S.AddOp, ufunc(np.add), torch_function("add"), partials(_identity, _identity), "add", "add", "fiu"),
    Row(S.SubtractOp, ufunc(np.subtract), torch_function("sub"),
        partials(_identity, lambda b, g, a: _neg(b, g)), "sub", "subtract"),
    Row(S.MulOp, ufunc(np.multiply), torch_function("mul"),
        partials(lambda b, g, a: _mul(b, g, a.y), lambda b, g, a: _mul(b, g, a.x)), "mul", "multiply", "fiu"),
    Row(S.DivOp, kn.divide_kernel, torch_kernel("divide_kernel"),
        partials(lambda b, g, a: _div(b, g, a.y), lambda b, g, a: _neg(b, _div(b, _mul(b, g, a.z), a.y))),
        "div", "true_divide"),
    Row(S.RemOp, kn.remainder_kernel, torch_kernel("remainder_kernel"),
        partials(_identity, lambda b, g, a: _neg(b, _mul(b, g, _truncated_quotient(b, a.x, a.y)))), "rem", "fmod"),
    Row(S.PowOp, kn.power_kernel, torch_kernel("power_kernel"), partials(_power_x, _power_y), "pow", "power", "f"),
    Row(S.MaxOp, ufunc(np.maximum), torch_function("maximum", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _balanced_eq(b, a.x, a.z, a.y)),
                 lambda b, g, a: _mul(b, g, _balanced_eq(b, a.y, a.z, a.x))), "max", "maximum"),
    Row(S.MinOp, ufunc(np.minimum), torch_function("minimum", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _balanced_eq(b, a.x, a.z, a.y)),
                 lambda b, g, a: _mul(b, g, _balanced_eq(b, a.y, a.z, a.x))), "min", "minimum"),
    Row(S.Atan2Op, float_math(np.arctan2), torch_function("atan2", real_only=True),
        partials(lambda b, g, a: _div(b, _mul(b, g, a.xs[1]), _atan2_denominator(b, a)),
                 lambda b, g, a: _neg(b, _div(b, _mul(b, g, a.xs[0]), _atan2_denominator(b, a)))),
        "atan2", "arctan2"),
    Row(S.AndOp, ufunc(np.bitwise_and), torch_function("bitwise_and"), ZERO, "bitwise_and", "bitwise_and"),
    Row(S.OrOp, ufunc(np.bitwise_or), torch_function("bitwise_or"), ZERO, "bitwise_or", "bitwise_or"),
    Row(S.XorOp, ufunc(np.bitwise_xor), torch_function("bitwise_xor"), ZERO, "bitwise_xor", "bitwise_xor"),
    Row(S.ShiftLeftOp, ufunc(kn.shift_left), torch_kernel("shift_kernel"), ZERO, "shift_left", "left_shift"),
    Row(S.ShiftRightArithmeticOp, arithmetic_shift_of_own_width(ufunc(kn.shift_right_arithmetic)),
        arithmetic_shift_of_own_width(torch_kernel("shift_kernel")), ZERO,
        "shift_right_arithmetic", "right_shift"),
    Row(S.ShiftRightLogicalOp, on_own_bits(ufunc(kn.shift_right_logical)), on_own_bits(torch_kernel("shift_kernel")),
        ZERO, "shift_right_logical", None),
    Row(S.CompareOp, kn.compare_kernel, torch_kernel("compare_kernel"), ZERO, None, None),
    Row(S.ComplexOp, kn.complex_kernel, torch_function("complex"), NO_COMPLEX, "complex", None, "f"),
    Row(S.SelectOp, ufunc(np.where), torch_function("where"),
        partials(None, lambda b, g, a: _where(b, a.x, g, _c(b, 0, g)), lambda b, g, a: _where(b, a.x, _c(b, 0, g), g)),
        "select", "where"),
    Row(S.ClampOp, ufunc(kn.clamp), torch_loom_function("clamp", real_only=True),
        partials(_clamp_lo, _clamp_x, _clamp_hi), "clamp", "clip"),
    # CHLO
    Row(C.SinhOp, float_math(np.sinh), torch_function("sinh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _chlo(b, C.CoshOp, a.x))), "sinh", "sinh"),
    Row(C.CoshOp, float_math(np.cosh), torch_function("cosh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _chlo(b, C.SinhOp, a.x))), "cosh", "cosh"),
    Row(C.TanOp, float_math(np.tan), torch_function("tan", real_only=True),
        partials(lambda b, g, a: _mul(b, g, stablehlo.add(b, _c(b, 1, a.z), _mul(b, a.z, a.z)))), None, None),
    Row(C.AsinOp, float_math(np.arcsin), torch_function("asin", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _rsqrt(b, stablehlo.subtract(b, _c(b, 1, a.x), _mul(b, a.x, a.x))))),
        "asin", "arcsin"),
    Row(C.AcosOp, float_math(np.arccos), torch_function("acos", real_only=True),
        partials(lambda b, g, a: _neg(b, _mul(b, g, _rsqrt(b, stablehlo.subtract(b, _c(b, 1, a.x),
                                                                                  _mul(b, a.x, a.x)))))),
        "acos", "arccos"),
    Row(C.AtanOp, float_math(np.arctan), torch_function("atan", real_only=True),
        partials(lambda b, g, a: _div(b, g, stablehlo.add(b, _c(b, 1, a.x), _mul(b, a.x, a.x)))), "atan", "arctan"),
    Row(C.AsinhOp, float_math(np.arcsinh), torch_function("asinh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _rsqrt(b, stablehlo.add(b, _mul(b, a.x, a.x), _c(b, 1, a.x))))),
        "asinh", "arcsinh"),
    Row(C.AcoshOp, float_math(np.arccosh), torch_function("acosh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _rsqrt(b, _mul(b, stablehlo.subtract(b, a.x, _c(b, 1, a.x)),
                                                          stablehlo.add(b, a.x, _c(b, 1, a.x)))))),
        "acosh", "arccosh"),
    Row(C.AtanhOp, float_math(np.arctanh), torch_function("atanh", real_only=True),
        partials(lambda b, g, a: _div(b, g, stablehlo.subtract(b, _c(b, 1, a.x), _mul(b, a.x, a.x)))),
        "atanh", "arctanh"),
    Row(C.SquareOp, ufunc(kn.square), ufunc(kn.square),  # x * x: the same function on tensors
        partials(lambda b, g, a: _mul(b, g, _mul(b, _c(b, 2, a.x), a.x))), "square", "square"),
    Row(C.IsInfOp, ufunc(kn.is_inf), torch_function("isinf"), ZERO, None, "isinf"),
    Row(C.IsPosInfOp, ufunc(kn.is_pos_inf), torch_function("isposinf"), ZERO, None, "isposinf"),
    Row(C.IsNegInfOp, ufunc(kn.is_neg_inf), torch_function("isneginf"), ZERO, None, "isneginf"),
    Row(C.NextAfterOp, ufunc(np.nextafter), torch_kernel("next_after_kernel"),
        unsupported("next_after steps to a neighbouring float: no derivative"), "nextafter", "nextafter"),
    Row(C.ConjOp, ufunc(np.conjugate), torch_kernel("conj_kernel"),
        partials(lambda b, g, a: _chlo(b, C.ConjOp, g)), "conj", "conjugate", "fc"),
    Row(C.ErfOp, kn.special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _gaussian(b, a.x, 2 / math.sqrt(math.pi)))), "erf", None),
    Row(C.ErfcOp, kn.special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _gaussian(b, a.x, -2 / math.sqrt(math.pi)))), "erfc", None),
    Row(C.ErfInvOp, kn.special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _mul(b, _c(b, math.sqrt(math.pi) / 2, a.z),
                                                 stablehlo.exponential(b, _mul(b, a.z, a.z))))), "erf_inv", None),
    Row(C.LgammaOp, kn.special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _chlo(b, C.DigammaOp, a.x))), "lgamma", None),
    Row(C.DigammaOp, kn.special_kernel, torch_kernel("special_kernel"),
        unsupported("its derivative, polygamma, has no kernel"), "digamma", None),
    Row(C.ZetaOp, ufunc(zeta), torch_function("special.zeta", dtypes=(np.dtype(np.float32), np.dtype(np.float64))),
        partials(unsupported("the derivative in x is not computed (nor by JAX)"),
                 lambda b, g, a: _neg(b, _mul(b, g, _mul(b, a.x, C.ZetaOp.build(
                     b, stablehlo.add(b, a.x, _c(b, 1, a.x)), a.y).results[0])))), "zeta", None),
]

# Elementwise ops declared without kernels or derivatives yet.
declare(["chlo._asin_acos_kernel", "chlo.bessel_i1e", "chlo.mulhi", "chlo.polygamma"],
        unsupported("no kernel yet: XLA expands it; loom's front end does not emit it"),
        tables=("interpreter", "numpy", "torch", "jvp", "vjp"))


# The implicitly broadcasting binary ops: JAX's exporter may emit them; loom's front end emits the
# stablehlo op after explicit broadcasts.
declare([name for name in chlo.DIALECT.ops if name.startswith("chlo.broadcast_")],
        unsupported("parsed and printed only: loom's front end broadcasts explicitly and emits the stablehlo op"))


def _install(row: Row) -> None:
    name = row.name
    if not isinstance(row.numpy, Unsupported):
        register(KERNELS, name, row.numpy)
    if row.torch is not None and not isinstance(row.torch, Unsupported):
        register(TORCH_KERNELS, name, row.torch)
    elif row.torch is None:
        declare(name, unsupported("runs its numpy kernel on the tensors' values"), tables=("torch",))
    d = row.derivative
    if isinstance(d, Unsupported):
        declare(name, d, tables=("jvp", "vjp"))
    elif d is ZERO:
        register(JVP_RULES, name, _zero_jvp)
        register(VJP_RULES, name, _zero_vjp)
    else:
        register(JVP_RULES, name, _jvp_rule(d))
        register(VJP_RULES, name, _vjp_rule(d))


for _row in OPS:
    _install(_row)

# Batching from the trait: every op that has it, with a row or not, batches elementwise.
for _dialect in (stablehlo.DIALECT, chlo.DIALECT):
    for _name, _cls in _dialect.ops.items():
        if _cls.definition is not None and stablehlo.Elementwise in _cls.definition.trait_set:
            register(BATCH_RULES, _name, elementwise_rule)

ROWS: dict[str, Row] = {row.name: row for row in OPS}

__all__ = ["OPS", "ROWS", "ZERO", "At", "Partials", "Row", "float_math", "partials", "torch_function",
           "torch_kernel", "torch_loom_function", "ufunc"]
