"""One table of sample inputs per op (in the manner of PyTorch's OpInfo), driving the value,
gradient and batching tests of tests/transforms/test_op_info.py and the edge-case inputs of the conformance
suite (tests/backend/test_backend_conformance.py).

A row: the op's name, its oracle (a jax.lax / jax.numpy function of the operands, run on XLA's CPU
backend in 64-bit mode), the dtypes sampled, the input domain, fixed edge-case inputs, the op's
attributes (in MLIR's generic form) and whether it is differentiated (in float64, against
jax.jvp / jax.vjp of the oracle). Every elementwise op of loom.ops.elementwise has a row; a test
checks it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from jax import lax
from jax import numpy as jnp

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, I16, I32, I64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
U8, U16, U32, U64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
BOOL, C64 = np.dtype(np.bool_), np.dtype(np.complex64)
FLOATS = (F32, F64, F16, BF16)
INTS = (I8, I16, I32, I64, U8, U16, U32, U64)
SIGNED = (I8, I16, I32, I64)

MLIR_TYPES = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64", I8: "i8", I16: "i16", I32: "i32", I64: "i64",
              U8: "ui8", U16: "ui16", U32: "ui32", U64: "ui64", BOOL: "i1", C64: "complex<f32>",
              np.dtype(np.complex128): "complex<f64>"}


def fixed(*values: Any, dtype: Any) -> np.ndarray:
    return np.array(values, dtype=dtype)


# Edge-case inputs, shared with the conformance suite --------------------------------------------

# Integer division and remainder: truncation, negative operands, x/0, INT_MIN/-1.
INT_EDGES = {
    I8: (fixed(7, -7, 7, -7, -128, -128, 5, 0, 127, -1, dtype=I8), fixed(2, 2, -2, -2, -1, 1, 0, 0, 0, 3, dtype=I8)),
    I16: (fixed(7, -7, 7, -7, -32768, 9, 0, dtype=I16), fixed(2, 2, -2, -2, -1, 0, 0, dtype=I16)),
    I32: (fixed(7, -7, 7, -7, -2 ** 31, 100, -100, 0, dtype=I32), fixed(2, 2, -2, -2, -1, 0, 7, 0, dtype=I32)),
    I64: (fixed(7, -7, 7, -7, -2 ** 63, 100, dtype=I64), fixed(2, 2, -2, -2, -1, 0, dtype=I64)),
    U8: (fixed(7, 250, 0, 255, 9, dtype=U8), fixed(2, 3, 0, 0, 10, dtype=U8)),
    U16: (fixed(7, 65535, 0, 300, dtype=U16), fixed(2, 0, 0, 7, dtype=U16)),
    U32: (fixed(7, 2 ** 32 - 1, 0, 300, dtype=U32), fixed(2, 0, 5, 7, dtype=U32)),
    U64: (fixed(7, 2 ** 64 - 1, 0, 300, dtype=U64), fixed(2, 0, 0, 7, dtype=U64)),
}
# NaN, infinities and signed zeros, in pairs.
SPECIAL_F32 = fixed(np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.0, np.nan, 2.0, dtype=F32)
SPECIAL2_F32 = fixed(1.0, -np.inf, 0.0, 0.0, -0.0, np.nan, -1.0, np.nan, 3.0, dtype=F32)
# Halves (rounding), signed zeros.
ROUNDING = (-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 0.3, -0.7, 3.49)
SIGN_SPECIAL_F32 = fixed(np.nan, -np.inf, np.inf, -0.0, 0.0, -3.0, 2.0, dtype=F32)
# float -> int conversions: NaN, infinities, out of range, halves.
FLOAT_EDGES_F32 = fixed(np.nan, np.inf, -np.inf, 3e9, -3e9, -1.5, 2.5, 300.7, -0.0, 127.9, -128.9, 1e20, 255.5, -0.9,
                        dtype=F32)
FLOAT_REMAINDER = (fixed(5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 1e10, dtype=F32),
                   fixed(2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 3.0, dtype=F32))
INT_POWER = (fixed(2, -2, 1, -1, 3, 0, 5, 7, dtype=I32), fixed(3, 3, 5, 5, 1, 4, 0, 11, dtype=I32))
INT64_POWER_WRAPS = (fixed(3, 7, -5, 2, dtype=I64), fixed(40, 30, 27, 63, dtype=I64))


def shift_amounts(dtype: np.dtype) -> np.ndarray:
    """0, 1, 3, the width minus one, the width and beyond (and negative amounts for signed types)."""
    bits = dtype.itemsize * 8
    amounts = [0, 1, 3, bits - 1, bits, bits + 3, 2 * bits] + ([-1, -bits] if dtype.kind == "i" else [])
    return np.array(amounts, dtype=dtype)


def bit_count_inputs(rs: np.random.RandomState, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.concatenate([random_array(rs, (6,), dtype, "full"), np.array([0, 1, info.max, info.min], dtype)])


def reduce_precision_inputs(rs: np.random.RandomState) -> np.ndarray:
    return np.concatenate([rs.randn(8) * 1e3, [1e-8, 7e4, 1e6, np.inf, np.nan, -0.0]]).astype(F32)


# Random inputs ----------------------------------------------------------------------------------

def random_array(rs: np.random.RandomState, shape: tuple, dtype: Any, domain: str = "normal") -> np.ndarray:
    """Random values of `dtype` in `domain`: normal, positive (> 0.1), unit ((-0.9, 0.9)), above_one
    (> 1.1), or full (integers over the type's whole range)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rs.rand(*shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if domain == "full":
            return rs.randint(info.min, info.max, size=shape, dtype=dt) if dt.itemsize < 8 else \
                rs.randint(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=shape, dtype=np.int64).astype(dt)
        lo, hi = (1, 20) if dt.kind == "u" or domain == "positive" else (-10, 11)
        return rs.randint(lo, hi, size=shape).astype(dt)
    if dt.kind == "c":
        return (rs.randn(*shape) + 1j * rs.randn(*shape)).astype(dt)
    x = rs.randn(*shape)
    if domain == "positive":
        x = np.abs(x) + 0.1
    elif domain == "unit":
        x = rs.uniform(-0.9, 0.9, size=shape)
    elif domain == "above_one":
        x = np.abs(x) + 1.1
    return np.asarray(x).astype(dt)


# The table --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OpInfo:
    op: str                                 # the op's name
    ref: Callable                           # the oracle, a function of the operands
    dtypes: tuple = FLOATS                  # dtypes of random samples (every operand the same)
    domain: str | tuple = "normal"          # per operand, or one for all
    samples: tuple = ()                     # fixed inputs: tuples of arrays, or functions of a RandomState
    properties: str = ""                    # the op's properties in generic form: `comparison_direction = ...`
    result: Callable | None = None          # result dtype from the operand dtype (default: the oracle's)
    grad: bool = True                       # differentiated (float64, against jax.jvp / jax.vjp)
    grad_domain: str | tuple | None = None  # domain of the gradient samples (default: `domain`)
    grad_wrt: tuple | None = None           # the operands differentiated (default: every float one)
    grad_oracle: str = "jax"                # "jax" (jax.jvp / jax.vjp) or "differences" (central, float64)
    tol: float | None = None                # relative and absolute tolerance of values (default: by dtype)
    arity: int = 1
    scalar_operands: tuple = ()             # operands that may be scalars (select's predicate, clamp's bounds)
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.op.split(".", 1)[1]

    def domain_of(self, i: int, grad: bool = False) -> str:
        d = self.grad_domain if grad and self.grad_domain is not None else self.domain
        return d[i] if isinstance(d, tuple) else d

    def random_samples(self, shape: tuple = (2, 3), grad: bool = False, dtypes: tuple | None = None) -> list[tuple]:
        out = []
        for dt in (dtypes if dtypes is not None else self.dtypes):
            rs = np.random.RandomState(zlib.crc32(f"{self.op}:{np.dtype(dt).name}".encode()))
            out.append(tuple(self.operand(rs, i, shape, dt, grad) for i in range(self.arity)))
        return out

    def operand(self, rs: np.random.RandomState, i: int, shape: tuple, dt: Any, grad: bool = False) -> np.ndarray:
        if self.op == "stablehlo.select" and i == 0:
            return random_array(rs, shape, BOOL)
        return random_array(rs, shape, dt, self.domain_of(i, grad))

    def fixed_samples(self) -> list[tuple]:
        out = []
        for k, s in enumerate(self.samples):
            rs = np.random.RandomState(zlib.crc32(f"{self.op}:fixed:{k}".encode()))
            out.append(tuple(v(rs) if callable(v) else v for v in (s if isinstance(s, tuple) else (s,))))
        return out


def _cmp(direction: str, compare_type: str | None = None) -> str:
    text = f"comparison_direction = #stablehlo<comparison_direction {direction}>"
    if compare_type:
        text += f", compare_type = #stablehlo<comparison_type {compare_type}>"
    return text


_COMPARE_REFS = {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt, "GE": lax.ge}
_NO_COMPLEX = FLOATS


def _int_edges(*dts: np.dtype) -> tuple:
    return tuple(INT_EDGES[d] for d in dts)


OP_INFO: list[OpInfo] = [
    # StableHLO unary
    OpInfo("stablehlo.abs", lax.abs, (*FLOATS, I8, I32, I64, C64), samples=(SIGN_SPECIAL_F32,)),
    OpInfo("stablehlo.negate", lax.neg, (*FLOATS, I8, I32, U8, C64), samples=(fixed(*ROUNDING, dtype=F32),)),
    OpInfo("stablehlo.sign", lax.sign, (*FLOATS, I32, C64), samples=(SIGN_SPECIAL_F32,), grad=False),
    OpInfo("stablehlo.floor", lax.floor, FLOATS, samples=(fixed(*ROUNDING, dtype=F32),), grad=False),
    OpInfo("stablehlo.ceil", lax.ceil, FLOATS, samples=(fixed(*ROUNDING, dtype=F64),), grad=False),
    OpInfo("stablehlo.round_nearest_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), FLOATS,
           samples=tuple(fixed(*ROUNDING, dtype=d) for d in FLOATS), grad=False),
    OpInfo("stablehlo.round_nearest_afz", lax.round, FLOATS, samples=tuple(fixed(*ROUNDING, dtype=d) for d in FLOATS),
           grad=False),
    OpInfo("stablehlo.is_finite", lax.is_finite, FLOATS, samples=(SIGN_SPECIAL_F32, SPECIAL_F32), grad=False),
    OpInfo("stablehlo.not", lax.bitwise_not, (I16, U32, BOOL, I64), domain="full", grad=False),
    OpInfo("stablehlo.popcnt", lax.population_count, (I8, I32, U16, U64), domain="full", grad=False,
           samples=tuple(lambda rs, d=d: bit_count_inputs(rs, d) for d in (I8, I32, U16, U64))),
    OpInfo("stablehlo.count_leading_zeros", lax.clz, (I8, I32, U16, U64), domain="full", grad=False,
           samples=tuple(lambda rs, d=d: bit_count_inputs(rs, d) for d in (I8, I32, U16, U64))),
    OpInfo("stablehlo.exponential", lax.exp, (*FLOATS, C64)),
    OpInfo("stablehlo.exponential_minus_one", lax.expm1, FLOATS,
           samples=(lambda rs: (random_array(rs, (5,), F64) * 1e-9),)),
    OpInfo("stablehlo.log", lax.log, FLOATS, domain="positive"),
    OpInfo("stablehlo.log_plus_one", lax.log1p, FLOATS, domain="positive",
           samples=(lambda rs: (random_array(rs, (5,), F64) * 1e-9),)),
    OpInfo("stablehlo.logistic", lax.logistic, FLOATS),
    OpInfo("stablehlo.tanh", lax.tanh, FLOATS),
    OpInfo("stablehlo.sine", lax.sin, FLOATS),
    OpInfo("stablehlo.cosine", lax.cos, FLOATS),
    OpInfo("stablehlo.tan", lax.tan, FLOATS, domain="unit"),
    OpInfo("stablehlo.sqrt", lax.sqrt, FLOATS, domain="positive"),
    OpInfo("stablehlo.rsqrt", lax.rsqrt, FLOATS, domain="positive"),
    OpInfo("stablehlo.cbrt", lax.cbrt, FLOATS, domain="positive", grad_domain="positive"),
    OpInfo("stablehlo.real", lax.real, (C64,), grad=False),
    OpInfo("stablehlo.imag", lax.imag, (C64,), grad=False),
    OpInfo("stablehlo.convert", lambda x: lax.convert_element_type(x, np.int32), (F32, F64, F16), grad=False,
           samples=(FLOAT_EDGES_F32, FLOAT_EDGES_F32.astype(F64)), result=lambda dt: I32),
    OpInfo("stablehlo.reduce_precision", lambda x: lax.reduce_precision(x, 5, 10), (F32, F64),
           samples=(reduce_precision_inputs,), properties="exponent_bits = 5 : i32, mantissa_bits = 10 : i32"),
    # StableHLO binary
    OpInfo("stablehlo.add", jnp.add, (*FLOATS, *INTS, BOOL, C64), arity=2),
    OpInfo("stablehlo.subtract", lax.sub, (*FLOATS, I8, I32, U8, U64, C64), arity=2),
    OpInfo("stablehlo.multiply", lax.mul, (*FLOATS, I8, I32, U8, U64, C64), arity=2),
    OpInfo("stablehlo.divide", lax.div, (*FLOATS, *INTS), arity=2, domain=("normal", "positive"),
           samples=tuple(INT_EDGES.values())),
    OpInfo("stablehlo.remainder", lax.rem, (F32, F64, I8, I32, I64, U8, U16, U32, U64), arity=2,
           domain=("normal", "positive"), samples=(FLOAT_REMAINDER, *INT_EDGES.values())),
    OpInfo("stablehlo.power", jnp.power, (F32, F64), arity=2, domain=("positive", "normal"),
           samples=(INT_POWER, INT64_POWER_WRAPS)),
    OpInfo("stablehlo.maximum", lax.max, (*FLOATS, I8, I32, U8, U64), arity=2,
           samples=((SPECIAL_F32, SPECIAL2_F32),)),
    OpInfo("stablehlo.minimum", lax.min, (*FLOATS, I8, I32, U8, U64), arity=2,
           samples=((SPECIAL_F32, SPECIAL2_F32),)),
    OpInfo("stablehlo.atan2", lax.atan2, FLOATS, arity=2),
    OpInfo("stablehlo.and", lax.bitwise_and, (I16, U32, BOOL, I64), arity=2, domain="full", grad=False),
    OpInfo("stablehlo.or", lax.bitwise_or, (I16, U32, BOOL, I64), arity=2, domain="full", grad=False),
    OpInfo("stablehlo.xor", lax.bitwise_xor, (I16, U32, BOOL, I64), arity=2, domain="full", grad=False),
    OpInfo("stablehlo.shift_left", lax.shift_left, (I8, I32, I64, U8, U32, U64), arity=2, grad=False,
           samples=tuple((lambda rs, d=d: random_array(rs, (shift_amounts(d).size,), d, "full"), shift_amounts(d))
                         for d in (I8, I32, I64, U8, U32, U64))),
    OpInfo("stablehlo.shift_right_arithmetic", lax.shift_right_arithmetic, (I8, I32, I64, U8, U32, U64), arity=2,
           grad=False,
           samples=tuple((lambda rs, d=d: random_array(rs, (shift_amounts(d).size,), d, "full"), shift_amounts(d))
                         for d in (I8, I32, I64, U8, U32, U64))),
    OpInfo("stablehlo.shift_right_logical", lax.shift_right_logical, (I8, I32, I64, U8, U32, U64), arity=2,
           grad=False,
           samples=tuple((lambda rs, d=d: random_array(rs, (shift_amounts(d).size,), d, "full"), shift_amounts(d))
                         for d in (I8, I32, I64, U8, U32, U64))),
    *(OpInfo("stablehlo.compare", ref, (F32, F64, BF16, I16, U32, BOOL), arity=2, grad=False,
             properties=_cmp(direction), samples=((SPECIAL_F32, SPECIAL2_F32),), extra={"id": direction})
      for direction, ref in _COMPARE_REFS.items()),
    OpInfo("stablehlo.complex", lax.complex, (F32,), arity=2, grad=False),
    OpInfo("stablehlo.select", lax.select, (F32, F64, I32), arity=3, scalar_operands=(0,)),
    OpInfo("stablehlo.clamp", lax.clamp, (F32, F64, I32), arity=3, scalar_operands=(0, 2)),
    # CHLO
    OpInfo("chlo.sinh", lax.sinh, (F32, F64, F16), domain="unit"),
    OpInfo("chlo.cosh", lax.cosh, (F32, F64, F16), domain="unit"),
    OpInfo("chlo.tan", lax.tan, (F32, F64), domain="unit"),
    OpInfo("chlo.asin", lax.asin, (F32, F64, F16), domain="unit"),
    OpInfo("chlo.acos", lax.acos, (F32, F64, F16), domain="unit"),
    OpInfo("chlo.atan", lax.atan, (F32, F64, F16)),
    OpInfo("chlo.asinh", lax.asinh, (F32, F64, F16)),
    OpInfo("chlo.acosh", lax.acosh, (F32, F64, F16), domain="above_one"),
    OpInfo("chlo.atanh", lax.atanh, (F32, F64, F16), domain="unit"),
    OpInfo("chlo.square", lax.square, (F32, F64, I32)),
    OpInfo("chlo.is_inf", jnp.isinf, (F32, F64), samples=(SPECIAL_F32,), grad=False),
    OpInfo("chlo.is_pos_inf", jnp.isposinf, (F32, F64), samples=(SPECIAL_F32,), grad=False),
    OpInfo("chlo.is_neg_inf", jnp.isneginf, (F32, F64), samples=(SPECIAL_F32,), grad=False),
    OpInfo("chlo.next_after", lax.nextafter, (F32, F64), arity=2, grad=False),
    OpInfo("chlo.conj", lax.conj, (C64,), grad=False),
    OpInfo("chlo.erf", lax.erf, (F32, F64), domain="unit"),
    OpInfo("chlo.erfc", lax.erfc, (F32, F64), domain="unit"),
    OpInfo("chlo.erf_inv", lax.erf_inv, (F32, F64), domain="unit"),
    OpInfo("chlo.lgamma", lax.lgamma, (F32, F64), domain="positive"),
    OpInfo("chlo.digamma", lax.digamma, (F32, F64), domain="positive", grad=False),
    OpInfo("chlo.zeta", lax.zeta, (F32, F64), arity=2, domain=("above_one", "positive"), grad_wrt=(1,),
           grad_oracle="differences",
           samples=((fixed(1.0, 0.5, 2.0, 2.0, 3.0, 2.5, 4.0, 2.0, dtype=F64),
                     fixed(1.0, 1.0, 0.0, -1.0, -2.5, -0.5, 1e9, 1e-3, dtype=F64)),)),
]



def mulhi_ref(a, b):
    """The high half of the double-width product, in int64 / uint64 arithmetic: widened for 32
    bits and fewer; for 64 bits, the unsigned product of 32-bit halves (no partial product
    overflows), corrected for negative signed operands (Hacker's Delight 8-2)."""
    dt = np.dtype(a.dtype)
    bits = dt.itemsize * 8
    if bits <= 32:
        wide = jnp.int64 if dt.kind == "i" else jnp.uint64
        return ((a.astype(wide) * b.astype(wide)) >> bits).astype(dt)
    u, v = a.astype(jnp.uint64), b.astype(jnp.uint64)
    m = jnp.uint64(0xFFFFFFFF)
    u0, u1, v0, v1 = u & m, u >> 32, v & m, v >> 32
    t = u1 * v0 + ((u0 * v0) >> 32)
    w1 = u0 * v1 + (t & m)
    high = u1 * v1 + (t >> 32) + (w1 >> 32)
    if dt.kind == "i":
        high = high - jnp.where(a < 0, v, 0).astype(jnp.uint64) - jnp.where(b < 0, u, 0).astype(jnp.uint64)
    return high.astype(dt)


MULHI_EDGES = tuple((fixed(info.min, info.min, info.max, info.max, -1 if d.kind == "i" else 1, 0, dtype=d),
                     fixed(info.min, info.max, info.max, -1 if d.kind == "i" else 2, info.min or 3, 5, dtype=d))
                    for d in (I8, I32, I64, U8, U32, U64) for info in (np.iinfo(d),))

@dataclass(frozen=True)
class OrderFirstOpInfo(OpInfo):
    """An op whose first operand is an order: random samples of it are small non-negative integers."""

    def operand(self, rs: np.random.RandomState, i: int, shape: tuple, dt: Any, grad: bool = False) -> np.ndarray:
        if i == 0:
            return rs.randint(0, 4, size=shape).astype(dt)
        return super().operand(rs, i, shape, dt, grad)


def asin_acos_kernel_ref(z):
    """CHLO's `_asin_acos_kernel` (which XLA's asin / acos decompositions use) from jax's complex
    sqrt and asin: w = Re(sqrt(1 - z^2)) + i |Im(asin(z))|, so that asin(z) = atan2(Re z, Re w)
    + i sign(Im z) Im w."""
    return jnp.sqrt(1 - z * z).real + 1j * jnp.abs(jnp.arcsin(z).imag)


OP_INFO += [
    OpInfo("chlo.mulhi", mulhi_ref, INTS, arity=2, domain="full", samples=MULHI_EDGES, grad=False),
    OrderFirstOpInfo("chlo.polygamma", lax.polygamma, (F32, F64), arity=2, domain="positive", grad_wrt=(1,),
                     samples=((fixed(0, 1, 2, 3, 1, 0.5, -1, 4, dtype=F64),
                               lambda rs: random_array(rs, (8,), F64, "positive")),)),
    OpInfo("chlo.bessel_i1e", lax.bessel_i1e, (F32, F64),
           samples=(fixed(0.0, -0.0, 1e-30, -3.0, 7.9, 8.0, 8.1, 50.0, -700.0, 1e10, np.inf, -np.inf, np.nan,
                          dtype=F64),)),
    OpInfo("chlo._asin_acos_kernel", asin_acos_kernel_ref, (C64, np.dtype(np.complex128)), grad=False,
           samples=(fixed(0.5, -0.5, 2.0, -2.0, 1.0, 3j, -3j, 1e-3 + 1e-3j, -2 + 3j, 10 - 0.5j, 0,
                          dtype=np.complex128),)),
]

__all__ = ["BF16", "FLOATS", "INTS", "INT_EDGES", "MLIR_TYPES", "OP_INFO", "OpInfo", "fixed", "random_array"]
