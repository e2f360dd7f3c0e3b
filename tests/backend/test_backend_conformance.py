"""Conformance: JAX functions lowered to StableHLO run in loom's interpreter and compiled
executor (numpy and torch backends) with JAX's results, the executors agree, and the generic text
loom prints back compiles and runs on XLA with loom's results.

Each case is a JAX function and its argument specs ((shape, dtype) for random inputs, or a
concrete array for edge cases). Lowered texts are cached per session; shapes are small.

JAX's results are what `jax.jit` computes: XLA compiling and running the module JAX lowered
(`compile_and_load` on that text). loom's printed text is compiled separately when it differs
from JAX's byte for byte; when it is identical it is the same XLA executable, and one compile
serves both checks (XLA compiles dominate this file's run time).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import jax.extend as jex  # noqa: E402
from jax import lax  # noqa: E402
from jaxlib import xla_client  # noqa: E402
from support.op_info import (  # noqa: E402  (the edge-case inputs of the per-op table)
    FLOAT_EDGES_F32,
    FLOAT_REMAINDER,
    INT64_POWER_WRAPS,
    INT_EDGES,
    INT_POWER,
    ROUNDING,
    SIGN_SPECIAL_F32,
    SPECIAL2_F32,
    SPECIAL_F32,
    bit_count_inputs,
    reduce_precision_inputs,
    shift_amounts,
)
from support.oracles import assert_matches  # noqa: E402

import loom.ir  # noqa: E402
from loom.runtime.executable import compile as loom_compile  # noqa: E402

BF16 = ml_dtypes.bfloat16
F32, F64, F16 = np.float32, np.float64, np.float16
I8, I16, I32, I64 = np.int8, np.int16, np.int32, np.int64
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64
BOOL, C64 = np.bool_, np.complex64
ALL_DTYPES = [F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, BOOL, C64]


@dataclass
class Case:
    name: str
    fn: Any
    specs: tuple
    tol: float | None = None           # relative and absolute tolerance for floats (None: by dtype)
    xla: bool = True                   # also run loom's printed text on XLA
    skip_interpreter: bool = False     # the per-element interpreter would be too slow
    extra: dict = field(default_factory=dict)


CASES: list[Case] = []


def case(name: str, fn, *specs, **kw) -> None:
    CASES.append(Case(name, fn, specs, **kw))


# Random inputs ----------------------------------------------------------------------------------

def random_array(rs: np.random.RandomState, shape: tuple, dtype, kind: str = "normal") -> np.ndarray:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rs.rand(*shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if kind == "full":
            return rs.randint(info.min, info.max, size=shape, dtype=dt) if dt.itemsize < 8 else \
                rs.randint(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=shape, dtype=np.int64).astype(dt)
        lo, hi = (0, 20) if dt.kind == "u" else (-10, 11)
        return rs.randint(lo, hi, size=shape).astype(dt)
    if dt.kind == "c":
        return (rs.randn(*shape) + 1j * rs.randn(*shape)).astype(dt)
    x = rs.randn(*shape)
    if kind == "positive":
        x = np.abs(x) + 0.1
    elif kind == "unit":
        x = rs.uniform(-0.9, 0.9, size=shape)
    return np.asarray(x).astype(dt)


def make_args(c: Case) -> list[np.ndarray]:
    rs = np.random.RandomState(zlib.crc32(c.name.encode()))
    args = []
    for s in c.specs:
        if isinstance(s, np.ndarray):
            args.append(s)
        elif callable(s):
            args.append(s(rs))
        else:
            shape, dtype, *kind = s
            args.append(random_array(rs, shape, dtype, *(kind or ["normal"])))
    return args




# Lowering, cached per session ---------------------------------------------------------------------

_LOWERED: dict[str, tuple[str, list, list]] = {}


def lowered(c: Case) -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """(generic StableHLO text, arguments, JAX's results) for a case."""
    if c.name not in _LOWERED:
        args = make_args(c)
        # JAX's answer through its own jit path, on its CPU backend (also where jax has a GPU)
        with jax.enable_x64(True), jax.default_device(jax.devices("cpu")[0]):
            jitted = jax.jit(c.fn, keep_unused=True)
            text = jitted.lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
            expected = [np.asarray(o) for o in jax.tree_util.tree_leaves(jitted(*args))]
        _LOWERED[c.name] = (text, args, expected)
    return _LOWERED[c.name]


_XLA: dict[str, Any] = {}


def run_on_xla(text: str, args: list[np.ndarray]) -> list[np.ndarray]:
    if not _XLA:
        backend = jex.backend.get_backend("cpu")
        _XLA["backend"] = backend
        _XLA["devices"] = backend.local_devices()[:1]
        _XLA["options"] = jex.backend.get_compile_options(num_replicas=1, num_partitions=1)
    devs = _XLA["devices"]
    exe = _XLA["backend"].compile_and_load(text, executable_devices=xla_client.DeviceList(tuple(devs)),
                                           compile_options=_XLA["options"])
    with jax.enable_x64(True):
        return [np.asarray(o) for o in exe.execute([jax.device_put(a, devs[0]) for a in args])]


def as_list(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


# The cases --------------------------------------------------------------------------------------

def fixed(*values, dtype):
    return np.array(values, dtype=dtype)


# Elementwise arithmetic over every dtype.
for _dt in ALL_DTYPES:
    case(f"add_{np.dtype(_dt).name}", lambda x, y: x + y, ((3, 4), _dt), ((3, 4), _dt))

for _dt in [F32, F64, F16, BF16, I8, I32, U8, U64, C64]:
    if np.dtype(_dt).kind == "c":
        case(f"sub_mul_{np.dtype(_dt).name}", lambda x, y: (x - y, x * y), ((5,), _dt), ((5,), _dt))
    else:
        case(f"sub_mul_max_min_{np.dtype(_dt).name}",
             lambda x, y: (x - y, x * y, jnp.maximum(x, y), jnp.minimum(x, y)), ((5,), _dt), ((5,), _dt))

for _dt in [F32, F64, F16, BF16]:
    case(f"divide_{np.dtype(_dt).name}", lambda x, y: x / y, ((6,), _dt), ((6,), _dt, "positive"))
    case(f"unary_math_a_{np.dtype(_dt).name}",
         lambda x: (-x, jnp.abs(x), jnp.sign(x), jnp.floor(x), jnp.ceil(x), lax.round(x),
                    lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), jnp.exp(x), jnp.expm1(x), jnp.tanh(x)),
         lambda rs, d=_dt: np.array(ROUNDING, dtype=d))
    case(f"unary_math_b_{np.dtype(_dt).name}",
         lambda x: (jnp.log(x), jnp.log1p(x), jnp.sqrt(x), lax.rsqrt(x), jnp.cbrt(x), jax.nn.sigmoid(x),
                    jnp.sin(x), jnp.cos(x), jnp.tan(x), jnp.isfinite(x)),
         ((7,), _dt, "positive"))

case("sign_special_f32", lambda x: (jnp.sign(x), jnp.isfinite(x), jnp.abs(x)), SIGN_SPECIAL_F32)
case("power_f32", lambda x, y: jnp.power(x, y), ((6,), F32, "positive"), ((6,), F32))
case("power_f64", lambda x, y: lax.pow(x, y), ((6,), F64, "positive"), ((6,), F64))
case("integer_pow_f32", lambda x: (lax.integer_pow(x, 3), lax.integer_pow(x, -2), x ** 2), ((6,), F32, "positive"))
case("power_int_jnp", lambda x, y: jnp.power(x, y), *INT_POWER)
case("power_int64_wraps", lambda x, y: jnp.power(x, y), *INT64_POWER_WRAPS)
case("atan2_f32", lambda x, y: jnp.arctan2(x, y), ((8,), F32), ((8,), F32))
case("atan2_f64", lambda x, y: jnp.arctan2(x, y), ((8,), F64), ((8,), F64))
case("complex_ops_c64", lambda x, y: (jnp.real(x), jnp.imag(x), jnp.abs(x), x * y, x / y, jnp.exp(x),
                                      lax.complex(jnp.real(y), jnp.imag(x)), jnp.conj(x)),
     ((4,), C64), ((4,), C64))
case("complex_from_parts_f32", lambda x, y: lax.complex(x, y) * 2, ((3, 2), F32), ((3, 2), F32))
case("square_expm1_small_f64", lambda x: (jnp.square(x), jnp.expm1(x * 1e-9), jnp.log1p(x * 1e-9)), ((5,), F64))

# Integer division and remainder edge cases (truncation, negative operands, x/0, INT_MIN/-1).
for _dt, (_a, _b) in INT_EDGES.items():
    case(f"int_div_rem_{np.dtype(_dt).name}", lambda x, y: (lax.div(x, y), lax.rem(x, y)), _a, _b)
case("floor_divide_mod_i32", lambda x, y: (x // y, x % y, jnp.fmod(x, y)),
     fixed(7, -7, 7, -7, 9, -9, 0, dtype=I32), fixed(2, 2, -2, -2, 3, 4, 5, dtype=I32))
case("remainder_float_sign", lambda x, y: (lax.rem(x, y), jnp.fmod(x, y), x % y), *FLOAT_REMAINDER)
case("remainder_f64", lambda x, y: lax.rem(x, y), ((6,), F64), ((6,), F64, "positive"))

# Bitwise and shifts.
for _dt in [I8, I32, I64, U8, U32, U64]:
    _shift = shift_amounts(np.dtype(_dt))
    case(f"shifts_{np.dtype(_dt).name}",
         lambda x, s: (lax.shift_left(x, s), lax.shift_right_arithmetic(x, s), lax.shift_right_logical(x, s)),
         lambda rs, d=_dt, n=_shift.size: random_array(rs, (n,), d, "full"), _shift)
for _dt in [I16, U32, BOOL, I64]:
    case(f"bitwise_{np.dtype(_dt).name}", lambda x, y: (x & y, x | y, x ^ y, ~x),
         lambda rs, d=_dt: random_array(rs, (6,), d, "full"), lambda rs, d=_dt: random_array(rs, (6,), d, "full"))
for _dt in [I8, I32, U16, U64]:
    case(f"popcnt_clz_{np.dtype(_dt).name}", lambda x: (lax.population_count(x), lax.clz(x)),
         lambda rs, d=_dt: bit_count_inputs(rs, np.dtype(d)))
case("logical_bool", lambda x, y: (jnp.logical_and(x, y), jnp.logical_or(x, y), jnp.logical_not(x),
                                   jnp.logical_xor(x, y)), ((7,), BOOL), ((7,), BOOL))

# Comparisons, including NaN, infinities and signed zeros.
_special, _special2 = SPECIAL_F32, SPECIAL2_F32
case("compare_nan_f32", lambda x, y: (x == y, x != y, x < y, x <= y, x > y, x >= y), _special, _special2)
case("compare_nan_f64", lambda x, y: (x < y, x >= y, x != y), _special.astype(F64), _special2.astype(F64))
case("compare_nan_bf16", lambda x, y: (x <= y, x > y), _special.astype(BF16), _special2.astype(BF16))
case("compare_ints", lambda x, y: (x < y, x == y, x >= y), ((8,), I16), ((8,), I16))
case("compare_uints", lambda x, y: (x < y, x > y), ((8,), U32), ((8,), U32))
case("compare_bool", lambda x, y: (x < y, x == y), ((6,), BOOL), ((6,), BOOL))
case("max_min_nan", lambda x, y: (jnp.maximum(x, y), jnp.minimum(x, y), lax.max(x, y)), _special, _special2)
case("select_where", lambda p, x, y: (jnp.where(p, x, y), lax.select(p, y, x)), ((2, 5), BOOL), ((2, 5), F32),
     ((2, 5), F32))
case("clamp_clip", lambda x: (lax.clamp(np.float32(-0.5), x, np.float32(0.5)), jnp.clip(x, -1.0, 0.25)), ((3, 4), F32))
case("clamp_int", lambda lo, x, hi: lax.clamp(lo, x, hi), fixed(-3, dtype=I32).reshape(()), ((7,), I32),
     fixed(4, dtype=I32).reshape(()))
case("nextafter_f32", lambda x, y: jnp.nextafter(x, y), ((5,), F32), ((5,), F32))

# Conversions.
_float_edges = FLOAT_EDGES_F32
for _dt in [I8, I16, I32, I64, U8, U32, U64, BOOL]:
    case(f"convert_f32_to_{np.dtype(_dt).name}", lambda x, d=_dt: lax.convert_element_type(x, d), _float_edges)
case("convert_f64_to_i32", lambda x: lax.convert_element_type(x, I32), _float_edges.astype(F64))
with np.errstate(over="ignore"):
    case("convert_f16_to_i16", lambda x: lax.convert_element_type(x, I16), _float_edges.astype(F16))
case("convert_int_wrap", lambda x: (lax.convert_element_type(x, U8), lax.convert_element_type(x, I8),
                                    lax.convert_element_type(x, U64), lax.convert_element_type(x, BOOL)),
     fixed(300, -1, 255, 128, -129, 0, 2 ** 31 - 1, dtype=I32))
case("convert_int_to_float", lambda x: (lax.convert_element_type(x, F32), lax.convert_element_type(x, F16),
                                        lax.convert_element_type(x, BF16), lax.convert_element_type(x, F64)),
     lambda rs: random_array(rs, (8,), I64, "full"))
case("convert_u64_to_float", lambda x: (lax.convert_element_type(x, F32), lax.convert_element_type(x, F64)),
     lambda rs: random_array(rs, (8,), U64, "full"))
case("convert_float_narrowing", lambda x: (x.astype(F32), x.astype(F16), x.astype(BF16)),
     fixed(1e40, -1e300, 70000.0, 1e-9, 1.0 + 2 ** -30, np.nan, -0.0, 3.14159265358979, dtype=F64))
case("convert_bool_to_numbers", lambda x: (x.astype(F32), x.astype(I32), x.astype(U8)), ((6,), BOOL))
case("convert_complex_to_real", lambda x: (lax.convert_element_type(jnp.real(x), F16), x.astype(np.complex128)),
     ((4,), C64))
case("bitcast_f32_i32", lambda x: (lax.bitcast_convert_type(x, I32), lax.bitcast_convert_type(x, U32)), ((2, 3), F32))
case("bitcast_f32_to_u8", lambda x: lax.bitcast_convert_type(x, U8), ((3,), F32))
case("bitcast_u8_to_f32", lambda x: lax.bitcast_convert_type(x, F32), lambda rs: random_array(rs, (2, 4), U8, "full"))
case("bitcast_i64_f64_u16", lambda x: (lax.bitcast_convert_type(x, F64), lax.bitcast_convert_type(x, U16)),
     lambda rs: random_array(rs, (3,), I64, "full"))
case("reduce_precision", lambda x: (lax.reduce_precision(x, 5, 10), lax.reduce_precision(x, 8, 7),
                                    lax.reduce_precision(x, 4, 3)),
     reduce_precision_inputs)

# Shapes.
case("reshape_transpose", lambda x: (x.reshape(6, 4), x.T, jnp.transpose(x, (1, 2, 0)).reshape(-1)), ((2, 3, 4), F32))
case("broadcast_expand_squeeze", lambda x, y: (x[:, None, :] + y[None, :, None], jnp.expand_dims(x, 0),
                                               jnp.squeeze(x[None])), ((3, 4), F32), ((5,), F32))
case("broadcast_to_scalar", lambda x: (jnp.broadcast_to(x, (2, 3)), x + jnp.zeros((4,), x.dtype)),
     fixed(2.5, dtype=F32).reshape(()))
case("slice_strided", lambda x: (x[1:7:2, ::3], x[::-1, 2], x[-3:, -2:]), ((8, 9), F32))
case("reverse_roll_tile_repeat", lambda x: (jnp.flip(x, (0, 1)), jnp.roll(x, 2, axis=1), jnp.tile(x, (2, 1)),
                                            jnp.repeat(x, 2, axis=0)), ((3, 4), I32))
case("concatenate_stack_split", lambda x, y: (jnp.concatenate([x, y, x], axis=1), jnp.stack([x, y]),
                                              *jnp.split(x, 2, axis=0)), ((4, 3), F32), ((4, 3), F32))
case("pad_constant", lambda x: (jnp.pad(x, ((1, 2), (0, 3)), constant_values=7), jnp.pad(x, 1)), ((3, 4), I32))
case("pad_negative_interior", lambda x: (lax.pad(x, np.float32(-1), ((1, -2, 1), (-1, 2, 2))),
                                         lax.pad(x, np.float32(0), ((-2, -1, 0), (0, 0, 3)))), ((4, 5), F32))
case("pad_reflect_edge", lambda x: (jnp.pad(x, 2, mode="reflect"), jnp.pad(x, (1, 3), mode="edge")), ((6,), F32))
case("iota_arange_eye_tri", lambda x: (jnp.arange(6) + x, jnp.eye(4, 5, k=1), jnp.tril(jnp.ones((4, 4))),
                                       lax.broadcasted_iota(I32, (3, 4), 1)), fixed(2, dtype=I64).reshape(()))
case("dynamic_slice_clamped", lambda x, i, j: (lax.dynamic_slice(x, (i, j), (2, 3)),
                                               lax.dynamic_slice(x, (i - 10, j + 10), (3, 2))),
     ((5, 6), F32), fixed(2, dtype=I32).reshape(()), fixed(4, dtype=I32).reshape(()))
case("dynamic_update_slice_clamped", lambda x, u, i: (lax.dynamic_update_slice(x, u, (i, i)),
                                                      lax.dynamic_update_slice(x, u, (i + 9, -i))),
     ((5, 6), F32), ((2, 3), F32), fixed(1, dtype=I32).reshape(()))
case("index_dynamic_scalar", lambda x, i: (x[i], x[:, i], x[-1]), ((4, 5), F32), fixed(3, dtype=I32).reshape(()))
case("scalar_0d", lambda x, y: x * y + 1, fixed(3.0, dtype=F32).reshape(()), fixed(-2.0, dtype=F32).reshape(()))
case("size_zero", lambda x: (x + 1, x.sum(axis=0), jnp.concatenate([x, x])), ((0, 3), F32))

# Gather.
case("gather_index_array", lambda x, i: x[i], ((5, 4), F32), fixed(0, 4, 2, 2, -1, dtype=I32))
case("gather_take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1), ((3, 5), F32),
     lambda rs: rs.randint(0, 5, (3, 2)).astype(I32))
case("gather_take_clip_oob", lambda x, i: (jnp.take(x, i, mode="clip"), jnp.take(x, i, mode="fill")),
     ((6,), F32), fixed(-3, 0, 5, 6, 100, dtype=I32))
case("gather_2d_points", lambda x, i, j: x[i, j], ((4, 5), I32), fixed(0, 3, 1, 2, dtype=I32),
     fixed(4, 0, 2, 2, dtype=I32))
case("gather_slices", lambda x, i: x[i, 1:3], ((5, 4, 3), F32), fixed(1, 3, dtype=I32))
case("gather_vmap_batching", jax.vmap(lambda x, i: x[i]), ((3, 6), F32),
     lambda rs: rs.randint(0, 6, (3, 2)).astype(I32))
case("gather_lax_clamped_windows", lambda x, i: lax.gather(
    x, i, lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1)),
    slice_sizes=(1, 3), mode=lax.GatherScatterMode.CLIP), ((4, 6), F32), fixed(0, 0, 3, 5, -2, 4, 1, 2, dtype=I32)
    .reshape(4, 2))
case("one_hot", lambda i: jax.nn.one_hot(i, 5), fixed(0, 4, 2, 7, -1, dtype=I32))

# Scatter.
case("scatter_set", lambda x, i, u: x.at[i].set(u), ((6,), F32), fixed(1, 4, 0, dtype=I32), ((3,), F32))
case("scatter_add_duplicates", lambda x, i, u: x.at[i].add(u), ((5, 3), F32), fixed(1, 1, 4, 0, 1, dtype=I32),
     ((5, 3), F32))
case("scatter_mul_min_max", lambda x, i, u: (x.at[i].multiply(u), x.at[i].min(u), x.at[i].max(u)),
     ((6,), F32), fixed(2, 5, 2, dtype=I32), ((3,), F32))
case("scatter_2d_point", lambda x, i, j, u: x.at[i, j].add(u), ((4, 4), I32), fixed(0, 3, 1, dtype=I32),
     fixed(2, 3, 0, dtype=I32), fixed(5, 6, 7, dtype=I32))
case("scatter_drop_oob", lambda x, i, u: x.at[i].set(u, mode="drop"), ((6,), F32), fixed(-1, 2, 6, 10, 5, dtype=I32),
     ((5,), F32))
case("scatter_vmap_batching", jax.vmap(lambda x, i, u: x.at[i].add(u)), ((3, 5), F32),
     lambda rs: rs.randint(0, 5, (3, 2)).astype(I32), ((3, 2), F32))
case("scatter_apply_custom_body", lambda x, i: x.at[i].apply(lambda v: v * 2 + 1), ((6,), F32),
     fixed(1, 3, 3, dtype=I32))
case("scatter_windows_partial_oob", lambda x, i, u: lax.scatter_add(
    x, i, u, lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0, 1)), mode=lax.GatherScatterMode.FILL_OR_DROP),
    ((4, 6), F32), fixed(0, 0, 3, 4, 1, 2, 2, 5, dtype=I32).reshape(4, 2), ((4, 3), F32))
case("segment_sum", lambda x, s: jax.ops.segment_sum(x, s, num_segments=4), ((7, 2), F32),
     fixed(0, 0, 1, 3, 3, 3, 2, dtype=I32))

# Dot products.
case("matmul_f32", lambda x, y: x @ y, ((4, 5), F32), ((5, 3), F32))
case("matmul_f64", lambda x, y: x @ y, ((4, 5), F64), ((5, 3), F64))
case("matmul_f16", lambda x, y: x @ y, ((4, 8), F16), ((8, 3), F16), tol=1e-2)
case("matmul_bf16", lambda x, y: x @ y, ((4, 8), BF16), ((8, 3), BF16), tol=3e-2)
case("matmul_i32", lambda x, y: x @ y, ((3, 4), I32), ((4, 2), I32))
case("dot_i8_preferred_i32", lambda x, y: lax.dot(x, y, preferred_element_type=I32),
     lambda rs: random_array(rs, (3, 6), I8, "full"), lambda rs: random_array(rs, (6, 2), I8, "full"))
case("dot_bf16_preferred_f32", lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                                            preferred_element_type=F32),
     ((3, 8), BF16), ((8, 2), BF16), tol=1e-2)
case("matmul_batched", lambda x, y: x @ y, ((2, 3, 4), F32), ((2, 4, 5), F32))
case("dot_vectors", lambda x, y: (jnp.dot(x, y), jnp.outer(x, y), jnp.vdot(x, y)), ((6,), F32), ((6,), F32))
case("matvec_vecmat", lambda m, v, w: (m @ v, w @ m), ((3, 4), F32), ((4,), F32), ((3,), F32))
case("einsum_general", lambda x, y: (jnp.einsum("bij,bjk->bik", x, y), jnp.einsum("bij,bkj->bki", x, x),
                                     jnp.einsum("bij->j", x), jnp.einsum("bij,bij->b", x, x)),
     ((2, 3, 4), F32), ((2, 4, 3), F32))
case("dot_general_multi_contract", lambda x, y: lax.dot_general(x, y, (((1, 3), (2, 0)), ((0,), (1,)))),
     ((2, 3, 4, 5), F32), ((5, 2, 3, 6), F32))
case("matmul_c64", lambda x, y: x @ y, ((3, 4), C64), ((4, 2), C64))
case("matmul_precision_highest", lambda x, y: jnp.matmul(x, y, precision=lax.Precision.HIGHEST),
     ((4, 4), F32), ((4, 4), F32))

# Convolutions.
_conv = lax.conv_general_dilated
case("conv2d_nchw_same", lambda x, w: _conv(x, w, (1, 1), "SAME"), ((1, 3, 8, 8), F32), ((4, 3, 3, 3), F32))
case("conv2d_nhwc_strided", lambda x, w: _conv(x, w, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")),
     ((2, 9, 9, 3), F32), ((3, 3, 3, 5), F32))
case("conv2d_asymmetric_padding", lambda x, w: _conv(x, w, (1, 2), ((2, 0), (1, 3))), ((1, 2, 6, 7), F32),
     ((3, 2, 2, 3), F32))
case("conv2d_rhs_dilation", lambda x, w: _conv(x, w, (1, 1), "VALID", rhs_dilation=(2, 2)), ((1, 2, 9, 9), F32),
     ((2, 2, 3, 3), F32))
case("conv_transpose_lhs_dilation", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME",
                                                                    dimension_numbers=("NHWC", "HWIO", "NHWC")),
     ((1, 4, 4, 2), F32), ((3, 3, 2, 3), F32))
case("conv1d_grouped", lambda x, w: _conv(x, w, (1,), "SAME", feature_group_count=2, dimension_numbers=("NCH", "OIH",
                                                                                                       "NCH")),
     ((2, 4, 10), F32), ((6, 2, 3), F32))
case("conv_depthwise", lambda x, w: _conv(x, w, (1, 1), "SAME", feature_group_count=3,
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")),
     ((1, 5, 5, 3), F32), ((3, 3, 1, 3), F32))
case("conv_batch_group_count", lambda x, w: _conv(x, w, (1, 1), "VALID", batch_group_count=2),
     ((4, 2, 5, 5), F32), ((4, 2, 2, 2), F32))
case("conv_kernel_grad", lambda x, w, g: jax.vjp(lambda w: _conv(x, w, (1, 1), "SAME", feature_group_count=2), w)[1](
    g)[0], ((2, 4, 5, 5), F32), ((4, 2, 3, 3), F32), ((2, 4, 5, 5), F32), tol=1e-4)
case("conv3d_small", lambda x, w: _conv(x, w, (1, 2, 1), "SAME"), ((1, 2, 4, 5, 4), F32), ((2, 2, 2, 2, 2), F32))
case("conv_f64", lambda x, w: _conv(x, w, (1, 1), "SAME"), ((1, 2, 5, 5), F64), ((2, 2, 3, 3), F64))
case("conv_f16", lambda x, w: _conv(x, w, (1, 1), "VALID"), ((1, 2, 5, 5), F16), ((2, 2, 3, 3), F16), tol=1e-2)

# Reductions.
case("reduce_sum_axes", lambda x: (x.sum(), x.sum(axis=0), x.sum(axis=(0, 2))), ((3, 4, 5), F32), tol=1e-4)
case("reduce_max_min_prod", lambda x: (x.max(axis=1), x.min(axis=0), jnp.prod(x, axis=1)), ((4, 5), F32))
case("reduce_int", lambda x: (x.sum(axis=1), x.max(), x.min(axis=0), jnp.prod(x, axis=0)), ((3, 5), I32))
case("reduce_uint8_wraps", lambda x: x.sum(axis=0, dtype=U8), lambda rs: random_array(rs, (40, 3), U8, "full"))
case("reduce_any_all", lambda x: (jnp.any(x, axis=0), jnp.all(x, axis=1), jnp.any(x)), ((4, 6), BOOL))
case("argmax_argmin", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x), jnp.argmax(x, axis=0)), ((4, 6), F32))
case("argmax_ties_nan", lambda x: (jnp.argmax(x), jnp.argmin(x), jnp.argmax(x[:3]), jnp.argmin(x[3:])),
     fixed(1.0, 3.0, 3.0, -1.0, np.nan, -1.0, np.nan, dtype=F32))
case("argmax_int", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), ((5, 4), I8))
case("mean_var_std", lambda x: (x.mean(axis=0), x.var(axis=1), x.std()), ((5, 6), F32), tol=1e-4)
case("logsumexp", lambda x: jax.nn.logsumexp(x, axis=-1), ((3, 7), F32))
case("norms", lambda x: (jnp.linalg.norm(x), jnp.linalg.norm(x, axis=1, ord=1), jnp.linalg.norm(x, ord=jnp.inf)),
     ((4, 3), F32))
case("reduce_sum_bf16_f16", lambda x, y: (x.sum(axis=0), y.sum(axis=1)), ((8, 3), BF16), ((3, 8), F16), tol=3e-2)
case("reduce_variadic_custom", lambda x, y: lax.reduce((x, y), (np.float32(0), np.float32(1)),
                                                       lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,)),
     ((3, 4), F32), ((3, 4), F32))
case("reduce_custom_body", lambda x: lax.reduce(x, np.float32(-np.inf), lambda a, b: jnp.maximum(a, b) * 1.0, (0,)),
     ((5, 3), F32))
case("reduce_complex_sum", lambda x: x.sum(axis=0), ((4, 3), C64))

# Windows: pooling, cumulative ops, select_and_scatter.
case("max_pool", lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
     ((2, 6, 6, 3), F32))
case("avg_pool_same", lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 3), (1, 1), "SAME") / 9.0, ((5, 5), F32))
case("reduce_window_dilated", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 2), ((1, 0), (0, 2)),
                                                          base_dilation=(2, 1), window_dilation=(1, 2)),
     ((4, 6), F32))
case("reduce_window_int_min", lambda x: lax.reduce_window(x, I32(np.iinfo(I32).max), lax.min, (2,), (1,), "SAME"),
     ((7,), I32))
case("reduce_window_custom_body", lambda x: lax.reduce_window(x, np.float32(0), lambda a, b: a + b * 1.0, (3,), (2,),
                                                              "VALID"), ((9,), F32))
case("cumsum_cumprod_cummax", lambda x: (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0), lax.cummax(x, axis=1),
                                         lax.cumsum(x, axis=0, reverse=True)), ((3, 5), F32))
case("cumsum_int", lambda x: jnp.cumsum(x), ((9,), I32))
case("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=0), ((6,), F32))
case("max_pool_grad_select_and_scatter", lambda x: jax.grad(
    lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "SAME").sum())(x), ((5, 5), F32))
case("max_pool_grad_overlapping", lambda x: jax.grad(
    lambda x: (lax.reduce_window(x, -np.inf, lax.max, (3, 3), (1, 1), "SAME") ** 2).sum())(x), ((4, 5), F32))
case("avg_pool_grad", lambda x: jax.grad(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1),
                                                                     "VALID").sum())(x), ((4, 4), F32))

# Sorting and top-k.
_sort_data = fixed(3.0, np.nan, -0.0, 0.0, -np.inf, 1.0, 3.0, np.inf, -2.0, np.nan, dtype=F32)
case("sort_nan_signed_zero", lambda x: (jnp.sort(x), jnp.argsort(x)), _sort_data)
case("sort_descending_stable", lambda x: (jnp.sort(x, descending=True), jnp.argsort(x, descending=True, stable=True)),
     fixed(2, 1, 2, 3, 1, 2, dtype=I32))
case("sort_2d_axis0", lambda x: (jnp.sort(x, axis=0), jnp.argsort(x, axis=0)), ((5, 3), F32))
case("sort_multi_operand", lambda k, v: lax.sort((k, v), num_keys=1), fixed(3, 1, 2, 1, 3, 0, dtype=I32),
     ((6,), F32))
case("sort_two_keys", lambda a, b, c: lax.sort((a, b, c), num_keys=2), fixed(1, 0, 1, 0, 1, 0, 1, dtype=I32),
     fixed(5, 2, 3, 2, 3, 1, 0, dtype=I32), ((7,), F32))
case("sort_uint_bool", lambda x, y: (jnp.sort(x), jnp.sort(y)), ((8,), U16), ((8,), BOOL))
case("sort_custom_comparator", lambda x: lax.sort_p.bind(x, dimension=0, is_stable=True, num_keys=1), ((6,), F64))
case("top_k", lambda x: lax.top_k(x, 3), ((4, 7), F32))
case("top_k_int_ties", lambda x: lax.top_k(x, 4), fixed(5, 1, 5, 3, 1, 5, dtype=I32))
case("searchsorted", lambda a, v: (jnp.searchsorted(a, v), jnp.searchsorted(a, v, side="right")),
     fixed(1.0, 2.0, 2.0, 5.0, 7.0, dtype=F32), fixed(0.0, 2.0, 6.0, 9.0, dtype=F32))
case("median_percentile", lambda x: (jnp.median(x), jnp.percentile(x, 30.0)), ((9,), F32))
case("unique_counts_sorted", lambda x: jnp.unique(x, size=6, fill_value=-1), fixed(3, 1, 3, 2, 1, 7, dtype=I32))

# Control flow.
case("while_loop_collatz", lambda n: lax.while_loop(lambda s: s[0] != 1,
                                                    lambda s: (jnp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1),
                                                               s[1] + 1), (n, 0))[1],
     fixed(27, dtype=I32).reshape(()))
case("fori_loop", lambda x: lax.fori_loop(0, 5, lambda i, a: a * 0.5 + i, x), ((3,), F32))
case("fori_loop_dynamic_bounds", lambda n, x: lax.fori_loop(0, n, lambda i, a: a + jnp.sin(a) * i, x),
     fixed(4, dtype=I32).reshape(()), ((2, 2), F32))
case("while_zero_iterations", lambda x: lax.while_loop(lambda c: c[0] > 100, lambda c: (c[0] + 1, c[1] * 2), (x, x)),
     fixed(5, dtype=I32).reshape(()))
case("nested_while", lambda x: lax.fori_loop(0, 3, lambda i, a: lax.fori_loop(0, i + 1, lambda j, b: b + j, a), x),
     fixed(0, dtype=I32).reshape(()))
case("scan_cumulative", lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs), ((6,), F32))
case("scan_reverse_carry", lambda xs, h: lax.scan(lambda c, x: (jnp.tanh(c @ x), c.sum()), h, xs, reverse=True),
     ((4, 3, 3), F32), ((3,), F32))
case("cond_pred", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), fixed(True, dtype=BOOL).reshape(()), ((4,), F32))
case("cond_false_multi", lambda p, x, y: lax.cond(p, lambda a, b: (a + b, a), lambda a, b: (a * b, b), x, y),
     fixed(False, dtype=BOOL).reshape(()), ((3,), F32), ((3,), F32))
case("cond_int_pred", lambda i, x: lax.cond(i > 2, lambda v: v * 2, lambda v: v - 1, x),
     fixed(5, dtype=I32).reshape(()), ((2,), I32))
case("switch_three", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v], x),
     fixed(2, dtype=I32).reshape(()), ((3,), F32))
case("switch_clamped_index", lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: v * 3], x),
     fixed(7, dtype=I32).reshape(()), ((3,), F32))
case("cond_inside_scan", lambda xs: lax.scan(lambda c, x: (lax.cond(x > 0, lambda: c + x, lambda: c - 1.0), c),
                                             np.float32(0), xs), ((5,), F32))
case("map_over_rows", lambda x: lax.map(lambda r: r.sum() * r, x), ((3, 4), F32))
case("nested_jit_call", lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) + jax.jit(jnp.cos)(x), ((4,), F32))
case("optimization_barrier", lambda x, y: lax.optimization_barrier((x * 2, y + 1)), ((3,), F32), ((2,), I32))
case("remat_checkpoint", lambda x: jax.grad(jax.checkpoint(lambda x: jnp.sin(jnp.cos(x)).sum()))(x), ((5,), F32))
case("custom_jvp_grad", lambda x: jax.grad(lambda x: jax.nn.relu(x).sum() + jax.nn.softplus(x).sum())(x), ((6,), F32))
case("grad_while_fori", lambda x: jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, a: a * jnp.sin(a), x).sum())(x),
     ((3,), F32))
case("stop_gradient", lambda x: jax.grad(lambda x: (x * lax.stop_gradient(x)).sum())(x), ((3,), F32))

# Random numbers.
case("random_bits_threefry", lambda k: jax.random.bits(jax.random.wrap_key_data(k), (3, 5)),
     fixed(0, 42, dtype=U32))
case("random_normal_uniform", lambda k: (jax.random.normal(jax.random.wrap_key_data(k), (4, 3)),
                                         jax.random.uniform(jax.random.wrap_key_data(k), (5,))),
     fixed(7, 11, dtype=U32))
case("random_split_randint", lambda k: jax.random.randint(jax.random.split(jax.random.wrap_key_data(k))[1], (6,), 0,
                                                          100), fixed(1, 2, dtype=U32))
case("random_permutation", lambda k: jax.random.permutation(jax.random.wrap_key_data(k), 8), fixed(3, 4, dtype=U32))
for _alg in ["THREE_FRY", "PHILOX", "DEFAULT"]:
    for _dt in [U32, U64, U8]:
        case(f"rng_bit_generator_{_alg.lower()}_{np.dtype(_dt).name}",
             lambda k, a=_alg, d=_dt: lax.rng_bit_generator(k, (3, 5), d, algorithm=getattr(
                 lax.RandomAlgorithm, "RNG_" + a)), fixed(12345, 2 ** 64 - 2, dtype=U64))

# Special functions, FFT.
case("erf_lgamma_digamma", lambda x: (jax.scipy.special.erf(x), jax.lax.lgamma(x), jax.lax.digamma(x),
                                      jax.scipy.special.erfc(x)), ((6,), F32, "positive"), tol=1e-4)
case("erf_inv", lambda x: jax.scipy.special.erfinv(x), ((6,), F32, "unit"), tol=1e-4)
case("hyperbolic_inverse_trig", lambda x: (jnp.sinh(x), jnp.cosh(x), jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x),
                                           jnp.arcsinh(x), jnp.arctanh(x)), ((6,), F32, "unit"), tol=1e-5)
case("fft_roundtrip", lambda x: (jnp.fft.fft(x), jnp.fft.ifft(x), jnp.fft.rfft(jnp.real(x)),
                                 jnp.fft.irfft(x, n=6)), ((8,), C64), tol=1e-4)
case("fft2", lambda x: jnp.fft.fft2(x), ((4, 4), C64), tol=1e-4)


# Models.
def _mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def _mlp_args(rs):
    return [(rs.randn(8, 16).astype(F32) * 0.3, rs.randn(16).astype(F32)),
            (rs.randn(16, 16).astype(F32) * 0.3, rs.randn(16).astype(F32)),
            (rs.randn(16, 4).astype(F32) * 0.3, rs.randn(4).astype(F32))]


case("mlp_forward", lambda w1, b1, w2, b2, w3, b3, x: _mlp([(w1, b1), (w2, b2), (w3, b3)], x),
     ((8, 16), F32), ((16,), F32), ((16, 16), F32), ((16,), F32), ((16, 4), F32), ((4,), F32), ((5, 8), F32), tol=1e-4)
case("mlp_loss_grad", lambda w1, b1, w2, b2, x, y: jax.grad(
    lambda p: jnp.mean((_mlp(p, x) - y) ** 2))([(w1, b1), (w2, b2)]),
    ((8, 16), F32), ((16,), F32), ((16, 3), F32), ((3,), F32), ((4, 8), F32), ((4, 3), F32), tol=1e-4)


def _attention(q, k, v, mask):
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(q.shape[-1]).astype(F32)
    scores = jnp.where(mask, scores, -1e9)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(scores, axis=-1), v)


case("attention_softmax", _attention, ((2, 4, 8), F32), ((2, 6, 8), F32), ((2, 6, 8), F32), ((2, 4, 6), BOOL),
     tol=1e-4)
case("attention_dot_product_api", lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True),
     ((1, 5, 2, 4), F32), ((1, 5, 2, 4), F32), ((1, 5, 2, 4), F32), tol=1e-4)


def _layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + 1e-5) * g + b


case("layer_norm", _layer_norm, ((4, 10), F32), ((10,), F32), ((10,), F32), tol=1e-4)
case("layer_norm_grad", lambda x, g, b: jax.grad(lambda x: _layer_norm(x, g, b).sum())(x),
     ((3, 6), F32), ((6,), F32), ((6,), F32), tol=1e-4)
case("softmax_log_softmax", lambda x: (jax.nn.softmax(x), jax.nn.log_softmax(x, axis=0)), ((3, 5), F32))
case("gelu_silu_elu", lambda x: (jax.nn.gelu(x), jax.nn.gelu(x, approximate=False), jax.nn.silu(x), jax.nn.elu(x)),
     ((7,), F32), tol=1e-5)
case("cross_entropy_loss", lambda logits, labels: -jnp.mean(jnp.take_along_axis(
    jax.nn.log_softmax(logits), labels[:, None], axis=1)), ((6, 5), F32), lambda rs: rs.randint(0, 5, 6).astype(I32))


def _convnet(x, w1, w2, wd):
    h = jax.nn.relu(_conv(x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    h = lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.nn.relu(_conv(h, w2, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    h = h.mean(axis=(1, 2))
    return jax.nn.log_softmax(h @ wd)


case("convnet_forward", _convnet, ((2, 8, 8, 3), F32), ((3, 3, 3, 4), F32), ((3, 3, 4, 6), F32), ((6, 5), F32),
     tol=1e-4)
case("convnet_grad", lambda x, w1, w2, wd: jax.grad(lambda w: _convnet(x, w, w2, wd).sum())(w1),
     ((1, 6, 6, 2), F32), ((3, 3, 2, 3), F32), ((3, 3, 3, 4), F32), ((4, 3), F32), tol=1e-3)
case("rnn_scan", lambda h, xs, w, u: lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u),) * 2, h, xs),
     ((2, 4), F32), ((5, 2, 3), F32), ((4, 4), F32), ((3, 4), F32), tol=1e-4)
case("polyval_vander", lambda c, x: (jnp.polyval(c, x), jnp.vander(x, 4)), ((4,), F32), ((5,), F32), tol=1e-4)
case("histogram_bincount", lambda x: jnp.bincount(x, length=6), fixed(0, 1, 1, 5, 3, 3, 3, dtype=I32))
case("kron_trace_diag", lambda x: (jnp.kron(x, x), jnp.trace(x), jnp.diag(x), jnp.diagonal(x, 1)), ((3, 3), F32))


# The test ---------------------------------------------------------------------------------------

def _ids() -> list[str]:
    return [c.name for c in CASES]


def test_case_count():
    """The suite covers at least 150 JAX functions."""
    assert len(CASES) >= 150, len(CASES)
    assert len(set(_ids())) == len(CASES), "case names must be unique"


def to_host(x):
    """A result as a numpy array (torch tensors through loom's own conversion, bf16 included)."""
    if isinstance(x, np.ndarray):
        return x
    from loom.backend.torch_kernels import to_numpy
    return to_numpy(x)


def _torch_devices() -> list[str]:
    """CPU tensors always (CI); CUDA too where a GPU is present."""
    try:
        import torch
    except ImportError:
        return ["cpu"]
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@pytest.mark.parametrize("device", _torch_devices())
@pytest.mark.parametrize("c", CASES, ids=_ids())
def test_jax_conformance_torch(c: Case, device: str):
    """Every case on the torch backend (CPU tensors, and CUDA ones on a GPU machine): jax's
    results, and the numpy backend's."""
    pytest.importorskip("torch")
    text, args, expected = lowered(c)
    module = loom.ir.parse(text)
    out = as_list(loom_compile(module, executor="compiled", backend="torch", device=device)(*args))
    assert len(out) == len(expected)
    for i, (got, want) in enumerate(zip(out, expected)):
        assert_matches(to_host(got), want, c.tol, f"{c.name}: torch result {i} vs jax")
    on_numpy = as_list(loom_compile(module, executor="compiled")(*args))
    for i, (got, want) in enumerate(zip(out, on_numpy)):
        assert_matches(to_host(got), want, c.tol, f"{c.name}: torch result {i} vs numpy backend")


@pytest.mark.parametrize("c", CASES, ids=_ids())
def test_jax_conformance(c: Case):
    text, args, expected = lowered(c)
    module = loom.ir.parse(text)
    module.verify()
    compiled = as_list(loom_compile(module, executor="compiled")(*args))
    assert len(compiled) == len(expected)
    for i, (got, want) in enumerate(zip(compiled, expected)):
        assert_matches(got, want, c.tol, f"{c.name}: compiled result {i} vs jax")
    if not c.skip_interpreter:
        interpreted = as_list(loom_compile(module, executor="interpreter")(*args))
        for i, (got, want) in enumerate(zip(interpreted, expected)):
            assert_matches(got, want, c.tol, f"{c.name}: interpreter result {i} vs jax")
        for i, (got, want) in enumerate(zip(interpreted, compiled)):
            assert_matches(got, want, c.tol, f"{c.name}: interpreter result {i} vs compiled")
    if c.xla:
        emitted = loom.ir.print(module, generic=True)
        on_xla = expected if emitted == text else run_on_xla(emitted, args)
        assert len(on_xla) == len(compiled)
        for i, (got, want) in enumerate(zip(on_xla, compiled)):
            assert_matches(got, want, c.tol, f"{c.name}: loom-emitted text on XLA, result {i} vs loom")
