"""Generate the MLIR text corpus used by loom's byte-exact printer/parser tests.

jaxlib's MLIR Python bindings are the oracle: every file under ``tests/corpus`` is text printed by
jaxlib's MLIR. The script is deterministic and idempotent; it deletes and rewrites its output
folders. Run it from the repository root with::

    .venv/bin/python tests/corpus/generate.py

It needs jax and jaxlib (0.10.2 was used) and nothing from loom. See README.md for the layout.
"""

# The snippet tables hold MLIR text whose lines are kept as MLIR would have them, so the line-length
# rule does not apply to this file.
# ruff: noqa: E501

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import re
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir, passmanager

jax.config.update("jax_enable_x64", True)

CORPUS = Path(__file__).resolve().parent
SCRIPT_DIR_TEXT = str(CORPUS)
DROPPED: list[str] = []


# ----------------------------------------------------------------------------------------------------------
# jaxlib helpers
# ----------------------------------------------------------------------------------------------------------


def new_context(registered: bool) -> ir.Context:
    """A context that accepts unregistered ops; ``registered`` also loads jax's dialects (func, arith, ...)."""
    context = jax_mlir.make_ir_context() if registered else ir.Context()
    context.allow_unregistered_dialects = True
    return context


def generic(module: ir.Module, debug: bool = False) -> str:
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=debug)


def reparse_generic(text: str, registered: bool, debug: bool = False) -> str:
    with new_context(registered):
        return generic(ir.Module.parse(text), debug)


def parse_and_print(text: str, registered: bool, debug: bool = False) -> str:
    """Parse ``text`` and print it in generic form, checking that the printed text is a fixed point."""
    printed = reparse_generic(text, registered, debug)
    again = reparse_generic(printed, registered, debug)
    if again != printed:
        raise ValueError("generic print does not re-parse to identical text")
    return printed


def plain_fixed_point(text: str, debug: bool = False) -> str:
    """Check that ``text`` re-prints identically when every op is unregistered (how a generic-only reader sees it).

    This matters for registered ops whose properties hold aliasable attributes: the alias collector does not
    look into the properties of unregistered ops (see NOTES.md), so such files are dropped.
    """
    if reparse_generic(text, registered=False, debug=debug) != text:
        raise ValueError("text prints differently when its dialects are not registered")
    return text


def dedent(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


class Writer:
    """Writes ``NNN_name<suffix>`` files into one output folder, numbering entries in order."""

    def __init__(self, folder: str) -> None:
        self.folder = CORPUS / folder
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        self.count = 0
        self.names: set[str] = set()

    def add(self, name: str, files: dict[str, str]) -> None:
        """``files`` maps a suffix (``.mlir``, ``.input.mlir``, ...) to the text to write."""
        if name in self.names:
            raise ValueError(f"duplicate corpus name {name}")
        self.names.add(name)
        self.count += 1
        for suffix, text in files.items():
            (self.folder / f"{self.count:03d}_{name}{suffix}").write_text(text, encoding="utf-8")


def attempt(kind: str, name: str, make: Callable[[], dict[str, str]], writer: Writer) -> None:
    try:
        files = make()
    except Exception as error:  # every failure is reported and the entry dropped
        message = " ".join(line.strip() for line in str(error).splitlines())
        DROPPED.append(f"{kind}/{name}: {type(error).__name__}: {message}")
        return
    writer.add(name, files)


# ----------------------------------------------------------------------------------------------------------
# 1a. JAX-lowered StableHLO
# ----------------------------------------------------------------------------------------------------------


def spec(shape: tuple[int, ...], dtype: object = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


F32_4 = spec((4,))
F32_3x4 = spec((3, 4))
I32_4 = spec((4,), jnp.int32)
BOOL_4 = spec((4,), jnp.bool_)
C64_4 = spec((4,), jnp.complex64)
KEY = spec((2,), jnp.uint32)

DTYPES = {
    "f32": jnp.float32,
    "f64": jnp.float64,
    "f16": jnp.float16,
    "bf16": jnp.bfloat16,
    "i8": jnp.int8,
    "i16": jnp.int16,
    "i32": jnp.int32,
    "i64": jnp.int64,
    "u8": jnp.uint8,
    "u16": jnp.uint16,
    "u32": jnp.uint32,
    "u64": jnp.uint64,
    "bool": jnp.bool_,
    "c64": jnp.complex64,
    "c128": jnp.complex128,
}

UNARY_F32 = {
    "neg": jnp.negative,
    "abs": jnp.abs,
    "sign": jnp.sign,
    "floor": jnp.floor,
    "ceil": jnp.ceil,
    "round": jnp.round,
    "exp": jnp.exp,
    "exp2": jnp.exp2,
    "expm1": jnp.expm1,
    "log": jnp.log,
    "log1p": jnp.log1p,
    "sqrt": jnp.sqrt,
    "rsqrt": lax.rsqrt,
    "cbrt": jnp.cbrt,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tan": jnp.tan,
    "tanh": jnp.tanh,
    "arcsin": jnp.arcsin,
    "arccos": jnp.arccos,
    "arctan": jnp.arctan,
    "sinh": jnp.sinh,
    "cosh": jnp.cosh,
    "arcsinh": jnp.arcsinh,
    "arccosh": jnp.arccosh,
    "arctanh": jnp.arctanh,
    "logistic": lax.logistic,
    "erf": lax.erf,
    "erfc": lax.erfc,
    "erf_inv": lax.erf_inv,
    "lgamma": lax.lgamma,
    "digamma": lax.digamma,
    "isfinite": jnp.isfinite,
    "isnan": jnp.isnan,
    "square": jnp.square,
    "reciprocal": jnp.reciprocal,
}

BINARY_F32 = {
    "sub": jnp.subtract,
    "mul": jnp.multiply,
    "div": jnp.divide,
    "rem": jnp.remainder,
    "pow": jnp.power,
    "max": jnp.maximum,
    "min": jnp.minimum,
    "atan2": jnp.arctan2,
    "nextafter": jnp.nextafter,
    "eq": jnp.equal,
    "ne": jnp.not_equal,
    "lt": jnp.less,
    "le": jnp.less_equal,
    "gt": jnp.greater,
    "ge": jnp.greater_equal,
}

BINARY_I32 = {
    "floordiv": jnp.floor_divide,
    "shl": lax.shift_left,
    "shr_arith": lax.shift_right_arithmetic,
    "shr_logical": lax.shift_right_logical,
    "and": jnp.bitwise_and,
    "or": jnp.bitwise_or,
    "xor": jnp.bitwise_xor,
    "not": lambda x, y: jnp.invert(x) + y,
    "popcount_clz": lambda x, y: lax.population_count(x) + lax.clz(y),
}


def _mesh_constraint(x: jax.Array) -> jax.Array:
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    return jax.lax.with_sharding_constraint(x * 2, spec)


@jax.custom_vjp
def _clip_gradient(x: jax.Array) -> jax.Array:
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))


def _inner_jit(x: jax.Array) -> jax.Array:
    return jnp.sin(x) * 2


_inner_jitted = jax.jit(_inner_jit)


def _scan_cumulative(xs: jax.Array) -> tuple[jax.Array, jax.Array]:
    def step(carry: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        return carry + x, carry * x

    return lax.scan(step, jnp.zeros((), xs.dtype), xs)


def _while_collatz(n: jax.Array) -> jax.Array:
    def cond(state: tuple[jax.Array, jax.Array]) -> jax.Array:
        return state[0] != 1

    def body(state: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        value, steps = state
        return jnp.where(value % 2 == 0, value // 2, 3 * value + 1), steps + 1

    return lax.while_loop(cond, body, (n, jnp.int32(0)))[1]


def _loss(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def _apply_each(functions: list[Callable], arity: int) -> Callable:
    """One function returning a tuple with every one of ``functions`` applied to the same arguments."""
    if arity == 1:
        return lambda x: tuple(function(x) for function in functions)
    return lambda x, y: tuple(function(x, y) for function in functions)


def jax_cases() -> list[tuple[str, Callable, list]]:
    """(name, function, argument specs) for every JAX-lowered module of the generic corpus."""
    cases: list[tuple[str, Callable, list]] = []
    for dtype_name, dtype in DTYPES.items():
        function = jnp.logical_or if dtype_name == "bool" else jnp.add
        cases.append((f"add_{dtype_name}", function, [spec((4,), dtype), spec((4,), dtype)]))
    for group, names in enumerate(_chunks(list(UNARY_F32), 6)):
        functions = [UNARY_F32[name] for name in names]
        cases.append((f"unary_{'_'.join(names[:2])}_etc{group}", _apply_each(functions, 1), [F32_4]))
    for group, names in enumerate(_chunks(list(BINARY_F32), 5)):
        functions = [BINARY_F32[name] for name in names]
        cases.append((f"binary_{'_'.join(names[:2])}_etc{group}", _apply_each(functions, 2), [F32_4, F32_4]))
    for group, names in enumerate(_chunks(list(BINARY_I32), 5)):
        functions = [BINARY_I32[name] for name in names]
        cases.append((f"int_{'_'.join(names[:2])}_etc{group}", _apply_each(functions, 2), [I32_4, I32_4]))
    cases += [
        (
            "mul_f16_bf16_mixed",
            lambda a, b: a.astype(jnp.float32) * b,
            [spec((4,), jnp.float16), spec((4,), jnp.bfloat16)],
        ),
        ("div_u64", jnp.floor_divide, [spec((4,), jnp.uint64), spec((4,), jnp.uint64)]),
        ("rem_i8", jnp.remainder, [spec((4,), jnp.int8), spec((4,), jnp.int8)]),
        ("logical_ops_bool", lambda a, b: (a & b) | ~(a ^ b), [BOOL_4, BOOL_4]),
        ("integer_pow", lambda x: x**3 + lax.integer_pow(x, -2), [F32_4]),
        (
            "complex_ops",
            lambda z: (jnp.real(z) + jnp.imag(z), jnp.conj(z) * z, jnp.abs(z), jnp.angle(z)),
            [C64_4],
        ),
        ("complex_exp_c128", lambda z: jnp.exp(z) / jnp.sqrt(z), [spec((3,), jnp.complex128)]),
        ("make_complex", lambda a, b: lax.complex(a, b), [F32_4, F32_4]),
        (
            "convert_types",
            lambda x: (
                x.astype(jnp.int32),
                x.astype(jnp.float16),
                x.astype(jnp.bool_),
                x.astype(jnp.uint8),
                x.astype(jnp.complex64),
            ),
            [F32_4],
        ),
        ("bitcast_convert", lambda x: lax.bitcast_convert_type(x, jnp.int32), [F32_4]),
        ("bitcast_convert_shape", lambda x: lax.bitcast_convert_type(x, jnp.uint8), [F32_4]),
        ("reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10), [F32_4]),
        ("matmul", jnp.matmul, [spec((3, 4)), spec((4, 5))]),
        ("matmul_batched", jnp.matmul, [spec((2, 3, 4)), spec((2, 4, 5))]),
        ("dot_vector", jnp.dot, [F32_4, F32_4]),
        (
            "dot_general_preferred",
            lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32),
            [spec((3, 4), jnp.bfloat16), spec((4, 2), jnp.bfloat16)],
        ),
        (
            "dot_precision_highest",
            lambda a, b: jnp.dot(a, b, precision=lax.Precision.HIGHEST),
            [F32_3x4, spec((4, 2))],
        ),
        (
            "dot_int8",
            lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32),
            [spec((2, 3), jnp.int8), spec((3, 2), jnp.int8)],
        ),
        (
            "einsum_attention",
            lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k),
            [spec((1, 2, 3, 4)), spec((1, 2, 5, 4))],
        ),
        (
            "einsum_outer_trace",
            lambda a, b: (jnp.einsum("i,j->ij", a, b), jnp.einsum("ii->", jnp.outer(a, b))),
            [F32_4, F32_4],
        ),
        (
            "conv2d_nchw",
            lambda x, w: lax.conv(x, w, (1, 1), "SAME"),
            [spec((1, 3, 8, 8)), spec((4, 3, 3, 3))],
        ),
        (
            "conv2d_nhwc_strided",
            lambda x, w: lax.conv_general_dilated(
                x,
                w,
                (2, 2),
                ((1, 1), (0, 1)),
                rhs_dilation=(1, 2),
                dimension_numbers=("NHWC", "HWIO", "NHWC"),
            ),
            [spec((2, 9, 9, 3)), spec((3, 3, 3, 8))],
        ),
        (
            "conv1d_grouped",
            lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2),
            [spec((1, 4, 10)), spec((6, 2, 3))],
        ),
        (
            "conv_transpose",
            lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            [spec((1, 4, 4, 2)), spec((3, 3, 2, 5))],
        ),
        (
            "reduce_sum",
            lambda x: (jnp.sum(x), jnp.sum(x, axis=0), jnp.sum(x, axis=1, keepdims=True)),
            [F32_3x4],
        ),
        ("reduce_max_min_prod", lambda x: (jnp.max(x, axis=1), jnp.min(x), jnp.prod(x, axis=0)), [F32_3x4]),
        ("reduce_any_all", lambda x: (jnp.any(x), jnp.all(x, axis=0)), [spec((3, 4), jnp.bool_)]),
        ("argmax_argmin", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x)), [F32_3x4]),
        ("mean_var_std", lambda x: (jnp.mean(x), jnp.var(x, axis=0), jnp.std(x, axis=1, ddof=1)), [F32_3x4]),
        ("logsumexp", jax.nn.logsumexp, [F32_3x4]),
        ("norm", lambda x: (jnp.linalg.norm(x), jnp.linalg.norm(x, ord=1, axis=1)), [F32_3x4]),
        ("cumsum", lambda x: jnp.cumsum(x, axis=1), [F32_3x4]),
        ("cumprod_cummax", lambda x: (jnp.cumprod(x), lax.cummax(x, axis=0)), [F32_4]),
        ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=0), [F32_4]),
        ("sort", jnp.sort, [F32_3x4]),
        ("argsort", jnp.argsort, [F32_4]),
        ("sort_multi_operand", lambda k, v: lax.sort((k, v), num_keys=1), [F32_4, I32_4]),
        ("sort_descending_stable", lambda x: jnp.sort(x, descending=True, stable=True), [I32_4]),
        ("top_k", lambda x: lax.top_k(x, 2), [F32_3x4]),
        ("gather_index_array", lambda x, i: x[i], [F32_3x4, spec((2,), jnp.int32)]),
        (
            "gather_take_along_axis",
            lambda x, i: jnp.take_along_axis(x, i, axis=1),
            [F32_3x4, spec((3, 2), jnp.int32)],
        ),
        ("gather_take_clip", lambda x, i: jnp.take(x, i, mode="clip"), [F32_4, spec((3,), jnp.int32)]),
        ("slice_static", lambda x: (x[1:3], x[::2, 1:], x[:, None, 0]), [F32_3x4]),
        ("index_dynamic_scalar", lambda x, i: x[i], [F32_3x4, spec((), jnp.int32)]),
        ("scatter_set", lambda x, i, v: x.at[i].set(v), [F32_4, spec((2,), jnp.int32), spec((2,))]),
        ("scatter_add", lambda x, i, v: x.at[i].add(v), [F32_3x4, spec((2,), jnp.int32), spec((2, 4))]),
        (
            "scatter_mul_min_max",
            lambda x, i: (x.at[i].mul(2.0), x.at[i].min(0.0), x.at[i].max(1.0)),
            [F32_4, spec((), jnp.int32)],
        ),
        ("scatter_2d_point", lambda x, v: x.at[1, 2].set(v), [F32_3x4, spec(())]),
        (
            "dynamic_slice",
            lambda x, i: lax.dynamic_slice(x, (i, jnp.int32(0)), (2, 2)),
            [F32_3x4, spec((), jnp.int32)],
        ),
        (
            "dynamic_update_slice",
            lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i)),
            [F32_3x4, spec((2, 2)), spec((), jnp.int32)],
        ),
        ("pad_constant", lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=7.0), [F32_3x4]),
        ("pad_interior_negative", lambda x: lax.pad(x, jnp.float32(0), ((-1, 2, 1),)), [F32_4]),
        ("pad_reflect", lambda x: jnp.pad(x, 2, mode="reflect"), [F32_4]),
        ("concatenate", lambda a, b: jnp.concatenate([a, b, a], axis=0), [F32_3x4, F32_3x4]),
        ("stack_split", lambda a: (jnp.stack([a, a], axis=1), *jnp.split(a, 2, axis=1)), [F32_3x4]),
        (
            "reshape_transpose",
            lambda x: (x.reshape(2, 6), x.T, jnp.transpose(x.reshape(3, 2, 2), (2, 0, 1))),
            [F32_3x4],
        ),
        (
            "broadcast_expand_squeeze",
            lambda x: (jnp.broadcast_to(x, (2, 3, 4)), jnp.expand_dims(x, 0), jnp.squeeze(x[:1])),
            [F32_3x4],
        ),
        (
            "flip_roll_tile_repeat",
            lambda x: (jnp.flip(x, 0), jnp.roll(x, 1, axis=1), jnp.tile(x, (2, 1)), jnp.repeat(x, 2, axis=0)),
            [F32_3x4],
        ),
        (
            "iota_arange_eye",
            lambda: (
                jnp.arange(5),
                lax.broadcasted_iota(jnp.int32, (2, 3), 1),
                jnp.eye(3, dtype=jnp.float32),
            ),
            [],
        ),
        ("tril_triu", lambda x: (jnp.tril(x), jnp.triu(x, 1)), [spec((4, 4))]),
        ("where_select", jnp.where, [BOOL_4, F32_4, F32_4]),
        ("select_n", lambda i, a, b, c: lax.select_n(i, a, b, c), [I32_4, F32_4, F32_4, F32_4]),
        ("clamp_clip", lambda x: (lax.clamp(jnp.float32(-1), x, jnp.float32(1)), jnp.clip(x, 0.0)), [F32_4]),
        (
            "max_pool",
            lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
            [spec((1, 4, 4, 3))],
        ),
        (
            "avg_pool_padded",
            lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 3), (1, 1), "SAME") / 9.0,
            [spec((5, 5))],
        ),
        ("nn_relu", jax.nn.relu, [F32_4]),
        ("nn_gelu_tanh", jax.nn.gelu, [F32_4]),
        ("nn_gelu_exact", lambda x: jax.nn.gelu(x, approximate=False), [F32_4]),
        ("nn_softmax", lambda x: jax.nn.softmax(x, axis=-1), [F32_3x4]),
        ("nn_log_softmax", jax.nn.log_softmax, [F32_3x4]),
        ("nn_sigmoid_silu", lambda x: (jax.nn.sigmoid(x), jax.nn.silu(x)), [F32_4]),
        ("nn_one_hot", lambda i: jax.nn.one_hot(i, 5), [I32_4]),
        (
            "nn_attention",
            lambda q, k, v: jax.nn.dot_product_attention(q, k, v),
            [spec((1, 3, 2, 4)), spec((1, 5, 2, 4)), spec((1, 5, 2, 4))],
        ),
        ("linalg_cholesky", jnp.linalg.cholesky, [spec((3, 3))]),
        ("linalg_qr", jnp.linalg.qr, [spec((4, 3))]),
        ("linalg_inv", jnp.linalg.inv, [spec((3, 3))]),
        ("linalg_det", jnp.linalg.det, [spec((3, 3))]),
        ("linalg_eigh", jnp.linalg.eigh, [spec((3, 3))]),
        ("linalg_svd", lambda x: jnp.linalg.svd(x, full_matrices=False), [spec((4, 3))]),
        ("linalg_solve", jnp.linalg.solve, [spec((3, 3)), spec((3,))]),
        (
            "linalg_triangular_solve",
            lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True),
            [spec((3, 3)), spec((3, 2))],
        ),
        ("fft", jnp.fft.fft, [C64_4]),
        ("rfft_irfft", lambda x: jnp.fft.irfft(jnp.fft.rfft(x)), [spec((8,))]),
        ("cond", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), [spec((), jnp.bool_), F32_4]),
        (
            "cond_int_pred_multi",
            lambda p, x, y: lax.cond(p > 0, lambda a, b: (a + b, a), lambda a, b: (a * b, b), x, y),
            [spec((), jnp.int32), F32_4, F32_4],
        ),
        (
            "switch",
            lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * 2], x),
            [spec((), jnp.int32), F32_4],
        ),
        ("while_loop", _while_collatz, [spec((), jnp.int32)]),
        ("fori_loop", lambda x: lax.fori_loop(0, 10, lambda i, acc: acc * 2 + i, x), [F32_4]),
        (
            "fori_loop_dynamic",
            lambda n, x: lax.fori_loop(0, n, lambda i, acc: acc + 1.0, x),
            [spec((), jnp.int32), F32_4],
        ),
        ("scan", _scan_cumulative, [F32_4]),
        (
            "scan_reverse_unroll",
            lambda xs: lax.scan(lambda c, x: (c * x, c), 1.0, xs, reverse=True, unroll=2),
            [spec((6,), jnp.float32)],
        ),
        ("map", lambda xs: lax.map(lambda r: jnp.sum(r**2), xs), [F32_3x4]),
        ("associative_scan", lambda x: lax.associative_scan(jnp.add, x), [spec((8,))]),
        (
            "nested_cond_in_scan",
            lambda xs: lax.scan(
                lambda c, x: (lax.cond(x > 0, lambda v: v + x, lambda v: v - x, c), c), 0.0, xs
            ),
            [F32_4],
        ),
        ("grad_tanh_sum", jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)), [F32_4]),
        ("grad_loss", jax.grad(_loss, argnums=(0,)), [spec((4, 2)), spec((3, 4)), spec((3, 2))]),
        (
            "value_and_grad_where",
            jax.value_and_grad(lambda x: jnp.sum(jnp.where(x > 0, x, 0.1 * x))),
            [F32_4],
        ),
        ("grad_while_fori", jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, a: a * a, x)), [spec(())]),
        ("grad_scan", jax.grad(lambda xs: _scan_cumulative(xs)[0]), [F32_4]),
        ("grad_custom_vjp", jax.grad(lambda x: jnp.sum(_clip_gradient(x) ** 2)), [F32_4]),
        ("jacfwd", jax.jacfwd(lambda x: jnp.sin(x) * x[0]), [spec((3,))]),
        ("hessian", jax.hessian(lambda x: jnp.sum(x**3)), [spec((2,))]),
        ("vmap_dot", jax.vmap(jnp.dot), [F32_3x4, F32_3x4]),
        ("vmap_in_axes", jax.vmap(lambda a, b: a * b, in_axes=(1, None)), [F32_3x4, spec((3,))]),
        ("vmap_of_grad", jax.vmap(jax.grad(lambda x: jnp.sin(x) * x)), [F32_4]),
        ("random_normal", lambda k: jax.random.normal(k, (3,)), [KEY]),
        ("random_uniform_split", lambda k: jax.random.uniform(jax.random.split(k)[1], (2, 2)), [KEY]),
        ("random_bits_permutation", lambda k: jax.random.permutation(k, 5), [KEY]),
        (
            "rng_bit_generator",
            lambda k: lax.rng_bit_generator(k, (2, 3), dtype=jnp.uint32),
            [spec((4,), jnp.uint32)],
        ),
        ("const_large_f32_hex", lambda x: x + np.arange(200, dtype=np.float32) * 0.5, [spec((200,))]),
        ("const_large_i64_hex", lambda x: x * np.arange(101, dtype=np.int64), [spec((101,), jnp.int64)]),
        ("const_exactly_100", lambda x: x + np.arange(100, dtype=np.int32), [spec((100,), jnp.int32)]),
        ("const_splat", lambda x: x * np.full((4,), 3.0, np.float32) + 1.0, [F32_4]),
        ("const_small_nonsplat_f32", lambda x: x + np.array([1.5, 0.1, -2.0, 1e10], np.float32), [F32_4]),
        (
            "const_small_nonsplat_f64",
            lambda x: x + np.array([0.1, 1 / 3, 3.14159265358979, 1e-300]),
            [spec((4,), jnp.float64)],
        ),
        ("const_nan_inf", lambda x: x + np.array([np.nan, np.inf, -np.inf, -0.0], np.float32), [F32_4]),
        ("const_nan_inf_scalar", lambda x: jnp.where(jnp.isnan(x), jnp.inf, jnp.nan), [F32_4]),
        (
            "const_f16_bf16",
            lambda a, b: (
                a + np.array([0.1, 65504, 6e-8, -1], np.float16),
                b * jnp.array([0.1, 3.0e38, 1.0, 2.0], jnp.bfloat16),
            ),
            [spec((4,), jnp.float16), spec((4,), jnp.bfloat16)],
        ),
        (
            "const_int_extremes",
            lambda a, b: (
                a + np.array([-128, 127, 0, 1], np.int8),
                b ^ np.array([0, 2**64 - 1, 2**63, 1], np.uint64),
            ),
            [spec((4,), jnp.int8), spec((4,), jnp.uint64)],
        ),
        ("const_bool", lambda x: x & np.array([True, False, True, True]), [BOOL_4]),
        ("const_complex", lambda z: z * np.array([1 + 2j, -0.5j, 3, 0], np.complex64), [C64_4]),
        ("const_complex_splat", lambda z: z + (1 - 1j), [spec((4,), jnp.complex128)]),
        (
            "pytree_dict_in_out",
            lambda d: {"sum": d["a"] + d["b"], "nested": (d["a"], [d["b"] * 2])},
            [{"a": F32_4, "b": F32_4}],
        ),
        ("multiple_outputs_unused_input", lambda x, y, z: (z, x + 1, x), [F32_4, I32_4, spec((2,))]),
        ("scalar_0d", lambda x, y: x * y + 1, [spec(()), spec(())]),
        (
            "size_zero",
            lambda x, y: (x * 2, jnp.sum(y, axis=1), jnp.concatenate([x, x])),
            [spec((0,)), spec((3, 0))],
        ),
        ("no_inputs_constant", lambda: jnp.float32(1.5), []),
        ("nested_jit_call", lambda x: _inner_jitted(x) + _inner_jitted(x * 2), [F32_4]),
        (
            "remat_checkpoint",
            jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))(x))),
            [F32_4],
        ),
        ("optimization_barrier", lambda x, y: lax.optimization_barrier((x, y)), [F32_4, I32_4]),
        ("stop_gradient", lambda x: x + lax.stop_gradient(x * 2), [F32_4]),
        ("sharding_constraint", _mesh_constraint, [F32_4]),
        ("searchsorted", lambda a, v: jnp.searchsorted(a, v), [spec((8,)), F32_4]),
        ("polyval_cumulative", lambda x: jnp.polyval(jnp.array([1.0, -2.0, 3.0]), x), [F32_4]),
    ]
    return cases


def lower_generic(function: Callable, specs: list) -> str:
    module = jax.jit(function).lower(*specs).compiler_ir("stablehlo")
    return generic(module)


def exported_generic(function: Callable, shapes: list[tuple[str, object]]) -> str:
    """Shape-polymorphic export: gives dynamic dimensions (tensor<?x...>) and dynamic StableHLO ops."""
    specs = [spec(jax.export.symbolic_shape(shape), dtype) for shape, dtype in shapes]
    text = jax.export.export(jax.jit(function))(*specs).mlir_module()
    return reparse_generic(text, registered=True)


EXPORT_CASES: list[tuple[str, Callable, list[tuple[str, object]]]] = [
    (
        "export_dynamic_batch_matmul",
        lambda x, w: jnp.tanh(x @ w),
        [("b, 4", jnp.float32), ("4, 3", jnp.float32)],
    ),
    ("export_dynamic_reshape_sum", lambda x: jnp.sum(x.reshape(-1, 2), axis=0), [("2*n", jnp.float32)]),
    (
        "export_dynamic_iota_concat",
        lambda x: jnp.concatenate([x, jnp.arange(x.shape[0], dtype=x.dtype)]),
        [("n", jnp.int32)],
    ),
]


def check_jax_text(text: str) -> str:
    """JAX modules must be a fixed point both in a registered and in a plain (all-unregistered) context."""
    registered = parse_and_print(text, registered=True)
    if registered != text:
        raise ValueError("lowered module does not re-print identically")
    return plain_fixed_point(text)


def generate_jax(writer: Writer) -> None:
    for name, function, specs in jax_cases():
        attempt(
            "generic",
            f"jax_{name}",
            lambda f=function, s=specs: {".mlir": check_jax_text(lower_generic(f, s))},
            writer,
        )
    for name, function, shapes in EXPORT_CASES:
        attempt(
            "generic",
            f"jax_{name}",
            lambda f=function, s=shapes: {".mlir": check_jax_text(exported_generic(f, s))},
            writer,
        )


# ----------------------------------------------------------------------------------------------------------
# 1b. hand-written generic snippets (parsed in a plain context: only `builtin` is loaded)
# ----------------------------------------------------------------------------------------------------------

FLOAT_TYPES = [
    "f16",
    "bf16",
    "f32",
    "f64",
    "f80",
    "f128",
    "tf32",
    "f8E5M2",
    "f8E4M3",
    "f8E4M3FN",
    "f8E5M2FNUZ",
    "f8E4M3FNUZ",
    "f8E4M3B11FNUZ",
    "f8E3M4",
    "f8E8M0FNU",
    "f6E2M3FN",
    "f6E3M2FN",
    "f4E2M1FN",
]

# Float literals that every float type can hold after rounding, and extra ones for the wider types.
FLOAT_VALUES_ALL = ["0.0", "1.0", "1.5", "-2.0", "0.5", "4.0", "0.1", "3.0", "-0.0"]
FLOAT_VALUES_WIDE = [
    "1.0e10",
    "3.14159265358979",
    "1.0e-5",
    "123456.789",
    "2.5e-1",
    "-65504.0",
    "1.0e-30",
    "6.0e-8",
    "1.0e-40",
    "3.0e38",
    "5.0e-324",
    "1.0e300",
    "0.3",
    "100.0",
    "1.0e6",
    "1.0e7",
    "1.0e16",
    "1.0e17",
]
FLOAT_HEX_BITS = {
    "f16": ["0x7C00", "0xFC00", "0x7E00", "0x0001", "0x3C00", "0x7BFF"],
    "bf16": ["0x7F80", "0xFF80", "0x7FC0", "0x0001", "0x3F80"],
    "f32": ["0x7F800000", "0xFF800000", "0x7FC00000", "0xFFC00000", "0x7FC00001", "0x00000001", "0x3F800000"],
    "f64": ["0x7FF0000000000000", "0xFFF0000000000000", "0x7FF8000000000000", "0x0000000000000001"],
    "f80": ["0x7FFF8000000000000000", "0x3FFF8000000000000000"],
    "f128": ["0x7FFF0000000000000000000000000000", "0x3FFF0000000000000000000000000000"],
    "tf32": ["0x3FC00", "0x7F800"],
}
SMALL_FLOAT_HEX_BITS = ["0x7F", "0xFF", "0x80", "0x01", "0x3C", "0x40"]
SIX_BIT_HEX_BITS = ["0x1F", "0x20", "0x01", "0x3F"]
FOUR_BIT_HEX_BITS = ["0x7", "0x8", "0x1", "0xF"]
WIDE_FLOATS = {"f16", "bf16", "f32", "f64", "f80", "f128", "tf32"}


def float_type_snippet(float_type: str) -> str:
    """One op per float type holding every float attribute form that type accepts."""
    values = FLOAT_VALUES_ALL + (FLOAT_VALUES_WIDE if float_type in WIDE_FLOATS else [])
    if float_type == "f8E8M0FNU":  # only powers of two, no sign, no zero
        values = ["1.0", "0.5", "4.0", "0.1", "3.0"]
    if float_type in FLOAT_HEX_BITS:
        hex_bits = FLOAT_HEX_BITS[float_type]
    elif float_type.startswith(("f6E", "f4E")):
        hex_bits = SIX_BIT_HEX_BITS if float_type.startswith("f6E") else FOUR_BIT_HEX_BITS
    else:
        hex_bits = SMALL_FLOAT_HEX_BITS
    entries = [f"v{index:02d} = {value} : {float_type}" for index, value in enumerate(values)]
    entries += [f"h{index} = {bits} : {float_type}" for index, bits in enumerate(hex_bits)]
    body = ",\n  ".join(entries)
    return (
        f'"test.float_attrs"() {{\n  {body}\n}} : () -> {float_type}\n'
        f'"test.float_dense"() {{splat = dense<1.5> : tensor<2x{float_type}>, '
        f"values = dense<[0.0, 1.0, -1.5, 0.25]> : tensor<4x{float_type}>}} : () -> ()\n"
        f'%0 = "test.float_value"() : () -> tensor<2x{float_type}>\n'
        f'"test.use"(%0) : (tensor<2x{float_type}>) -> (complex<{float_type}>)\n'
    )


def big_hex(count: int, width: int) -> str:
    return "0x" + "".join(f"{index % 256:02X}" * (width // 8) for index in range(count))


def dense_values(count: int, start: int = 0) -> str:
    return ", ".join(str(start + index) for index in range(count))


TYPE_SNIPPETS: list[tuple[str, str]] = [
    ("type_integers_signless", '"test.op"() : () -> (i0, i1, i7, i8, i16, i32, i64, i128, i1024)\n'),
    (
        "type_integers_signed_unsigned",
        '"test.op"() : () -> (si0, si1, si8, si64, ui0, ui1, ui8, ui96, ui64)\n',
    ),
    ("type_index_none", '"test.op"(%0) : (index) -> none\n%0 = "test.def"() : () -> index\n'),
    (
        "type_complex",
        '"test.op"() : () -> (complex<f32>, complex<f64>, complex<i8>, complex<bf16>, complex<si16>)\n',
    ),
    (
        "type_tuple",
        '"test.op"() : () -> (tuple<>, tuple<i32>, tuple<i32, f32>, tuple<tuple<i1>, tensor<2xi8>>)\n',
    ),
    (
        "type_function_as_attr",
        dedent("""
        "test.op"() {a = () -> (), b = (i32) -> i64, c = (i32) -> (i64), d = (i1, i2) -> (i3, i4),
                     e = () -> ((i32) -> i32), f = ((i1) -> i1) -> (), g = (tuple<>) -> tuple<i1, index>} : () -> ()
    """),
    ),
    (
        "type_tensor_ranked",
        '"test.op"() : () -> (tensor<f32>, tensor<4xf32>, tensor<2x3x4xi8>, tensor<1x1x1x1xi1>)\n',
    ),
    (
        "type_tensor_dynamic_unranked",
        '"test.op"() : () -> (tensor<?xf32>, tensor<?x4x?xi32>, tensor<*xf32>, tensor<*xi1>)\n',
    ),
    ("type_tensor_zero_dims", '"test.op"() : () -> (tensor<0xf32>, tensor<3x0xi8>, tensor<0x?xf16>)\n'),
    (
        "type_tensor_encoding",
        dedent("""
        "test.op"() : () -> (tensor<4xf32, "enc">, tensor<?x4xf32, #foo.enc<1, 2>>, tensor<8xi8, 42 : i64>)
        "test.op2"() : () -> tensor<2x2xf32, {a = 1 : i32, b}>
    """),
    ),
    (
        "type_memref_basic",
        '"test.op"() : () -> (memref<f32>, memref<4xf32>, memref<?x8xi8>, memref<2x0xf64>)\n',
    ),
    (
        "type_memref_strided",
        dedent("""
        "test.op"() : () -> (memref<4x4xf32, strided<[4, 1]>>, memref<?x?xf32, strided<[?, 1], offset: ?>>)
        "test.op"() : () -> (memref<8xf32, strided<[1], offset: 5>>, memref<f32, strided<[]>>,
                             memref<4x4xf32, strided<[1, 4], offset: 0>>)
    """),
    ),
    (
        "type_memref_affine_layout",
        dedent("""
        "test.op"() : () -> (memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>,
                             memref<16xf32, affine_map<(d0)[s0] -> (d0 + s0)>>,
                             memref<4x4xf32, affine_map<(d0, d1) -> (d0, d1)>>)
    """),
    ),
    (
        "type_memref_memory_space",
        dedent("""
        "test.op"() : () -> (memref<4xf32, 1>, memref<4xf32, 0>, memref<4xf32, "gpu">,
                             memref<4xf32, strided<[2]>, 5 : i32>, memref<*xf32>, memref<*xi8, 2>)
    """),
    ),
    (
        "type_vector",
        dedent("""
        "test.op"() : () -> (vector<4xf32>, vector<2x3xi8>, vector<[4]xf32>, vector<2x[8]xi1>, vector<f32>,
                             vector<1x2x3xindex>, vector<[2]x[2]xbf16>)
    """),
    ),
    (
        "type_opaque_dialect",
        dedent("""
        "test.op"() : () -> (!foo.bar, !foo<"x">, !foo.bar<1, [2]>, !foo<bar>, !foo<bar<1>>, !foo.b<"a\\"<b">)
        "test.op"() : () -> (!foo.bar<{a = 1}, (x), [<>]>, !foo.baz<i32, tensor<4xf32>>, !tf.string, !a.b.c)
    """),
    ),
    (
        "type_nested_containers",
        dedent("""
        "test.op"() : () -> (tensor<2xcomplex<f32>>, tensor<2xvector<4xf32>>, tuple<memref<2xf32>, tensor<*xi1>>,
                             tensor<3x!foo.elem>, memref<2xvector<4xi8>>, memref<2xcomplex<f64>>)
    """),
    ),
]

TYPE_SNIPPETS += [(f"type_{float_type}", float_type_snippet(float_type)) for float_type in FLOAT_TYPES]

ATTRIBUTE_SNIPPETS: list[tuple[str, str]] = [
    (
        "attr_integer_widths",
        dedent("""
        "test.op"() {a = 0 : i1, b = 1 : i1, c = true, d = false, e = 42, f = 42 : i32, g = -7 : i16, h = 3 : index,
                     i = 5 : i7, j = 0 : i64, k = 12345678901234567890123 : ui96,
                     l = 170141183460469231731687303715884105727 : i128, m = 0 : i0} : () -> ()
    """),
    ),
    (
        "attr_integer_overflow_wrap",
        dedent("""
        "test.op"() {a = 255 : i8, b = 128 : i8, c = 18446744073709551615 : i64, d = 65535 : i16,
                     e = 4294967295 : i32, f = 9223372036854775808 : i64, g = 3 : i2} : () -> ()
    """),
    ),
    (
        "attr_integer_signed_unsigned",
        dedent("""
        "test.op"() {a = -1 : si8, b = 127 : si8, c = -128 : si8, d = 255 : ui8, e = 0 : ui8,
                     f = 18446744073709551615 : ui64, g = -9223372036854775808 : si64, h = 1 : ui1, i = -1 : si1} : () -> ()
    """),
    ),
    (
        "attr_integer_hex",
        dedent("""
        "test.op"() {a = 0x10 : i32, b = 0xFF : i8, c = 0x7FFFFFFF : i32, d = 0xffffffffffffffff : i64,
                     e = 0x0 : index, f = -0x10 : i32} : () -> ()
    """),
    ),
    (
        "attr_float_default_f64",
        dedent("""
        "test.op"() {a = 1.5, b = 42.0, c = 2., d = -0.0, e = 1.0e10, f = 1.0E-10, g = 3.25, h = 0.1,
                     i = 1.0e+2, j = 0x7FF0000000000000 : f64} : () -> ()
    """),
    ),
    (
        "attr_float_formatting_f64",
        dedent("""
        "test.op"() {a = 3.14159265358979, b = 0.30000000000000004, c = 1.0e-300, d = 5.0e-324,
                     e = 1.7976931348623157e308, f = 2.2250738585072014e-308, g = 123456789.0, h = 1234567.0,
                     i = 0.000001, j = 1.0e-7, k = 1.0e21, l = 1.0e22, m = 9007199254740993.0, n = 0.1e1,
                     o = 100.0, p = 1.25e-2, q = 6.02214076e23, r = 2.718281828459045} : () -> ()
    """),
    ),
    (
        "attr_float_formatting_f32",
        dedent("""
        "test.op"() {a = 3.14159265358979 : f32, b = 0.1 : f32, c = 1.0e-45 : f32, d = 3.4028235e38 : f32,
                     e = 1.17549435e-38 : f32, f = 16777217.0 : f32, g = 0.3 : f32, h = 2.5 : f32,
                     i = 1.0e-10 : f32, j = 123.456 : f32, k = 0x7FC00000 : f32, l = 0x7F800000 : f32,
                     m = 0xFF800000 : f32, n = 0x80000000 : f32} : () -> ()
    """),
    ),
    (
        "attr_float_special_hex_f16_bf16",
        dedent("""
        "test.op"() {a = 0x7C00 : f16, b = 0xFC00 : f16, c = 0x7E00 : f16, d = 0x7F80 : bf16, e = 0x7FC0 : bf16,
                     f = 0xFFC0 : bf16, g = 0x3C00 : f16, h = 0x0001 : f16, i = 0.1 : f16, j = 0.1 : bf16,
                     k = 65504.0 : f16, l = 3.0e38 : bf16} : () -> ()
    """),
    ),
    (
        "attr_float_in_arrays",
        dedent("""
        "test.op"() {a = [1.5, 2.0 : f32, 0.1, 0.1 : f32, 0x7FF8000000000000, 0x7FC00000 : f32, -0.0 : f16]} : () -> ()
    """),
    ),
    (
        "attr_string_escapes",
        dedent(r"""
        "test.op"() {a = "plain", b = "quote\"d", c = "new\nline", d = "tab\there", e = "back\\slash",
                     f = "\01\02\7F\1b", g = "caf\C3\A9", h = "é ☃ 日本", i = "", j = "\00", k = "\FF\fe",
                     l = "a\0Ab\09c", m = "'single'", n = "}{)(][><"} : () -> ()
    """),
    ),
    (
        "attr_string_typed",
        '"test.op"() {a = "x" : i32, b = "y" : !foo.str, c = "z" : tensor<2xi8>} : () -> ()\n',
    ),
    (
        "attr_arrays_nested",
        dedent("""
        "test.op"() {a = [], b = [[]], c = [1, [2, [3, []]]], d = [1 : i32, "s", i32, @sym, unit, true],
                     e = [[1.0, 2.0], [3 : i8]], f = [{}, {a = 1}]} : () -> ()
    """),
    ),
    (
        "attr_dictionaries_nested",
        dedent("""
        "test.op"() {z = {}, a = {c = 1, b = {e = [], d = {f}}}, "quoted key" = 1, "k.with.dots" = 2,
                     "0digit" = 3, "sp ace" = {"in ner" = 5}} : () -> ()
    """),
    ),
    ("attr_unit", '"test.op"() {flag, other = unit, arr = [unit, unit], dict = {u}} : () -> ()\n'),
    (
        "attr_type_values",
        dedent("""
        "test.op"() {a = i32, b = tensor<?xf32>, c = !foo.bar, d = none, e = index, f = memref<*xf32>,
                     g = vector<[4]xi1>, h = complex<f64>, i = tuple<>, j = [i1, f32]} : () -> ()
    """),
    ),
    (
        "attr_symbol_refs",
        dedent("""
        "test.op"() {a = @a, b = @a::@b::@c, c = @"quoted name", d = @"with\\"quote", e = @"0starts_with_digit",
                     f = @under_score, g = @"a.b"::@"c d", h = @"$dollar", i = @a$b.c_d, j = [@x, @y::@z]} : () -> ()
    """),
    ),
    (
        "attr_dense_int_splat",
        dedent("""
        "test.op"() {a = dense<1> : tensor<4xi32>, b = dense<-1> : tensor<2x2xi8>, c = dense<0> : tensor<i64>,
                     d = dense<255> : tensor<3xui8>, e = dense<7> : vector<4xi16>, f = dense<3> : tensor<2xindex>,
                     g = dense<1> : tensor<2xi4>, h = dense<-1> : tensor<2xsi4>} : () -> ()
    """),
    ),
    (
        "attr_dense_float_splat",
        dedent("""
        "test.op"() {a = dense<1.5> : tensor<2x3xf32>, b = dense<0.1> : tensor<4xf64>, c = dense<-0.0> : tensor<2xf16>,
                     d = dense<0x7FC00000> : tensor<2xf32>, e = dense<1.0e10> : tensor<2xbf16>,
                     f = dense<0.0> : tensor<0xf32>} : () -> ()
    """),
    ),
    (
        "attr_dense_bool",
        dedent("""
        "test.op"() {a = dense<true> : tensor<3xi1>, b = dense<false> : tensor<2x2xi1>, c = dense<[true, false, true]> :
                     tensor<3xi1>, d = dense<[[true], [false]]> : tensor<2x1xi1>, e = dense<1> : tensor<2xi1>} : () -> ()
    """),
    ),
    (
        "attr_dense_complex",
        dedent("""
        "test.op"() {a = dense<(1.0, 2.0)> : tensor<complex<f32>>, b = dense<(1.5, -0.5)> : tensor<3xcomplex<f64>>,
                     c = dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f64>>, d = dense<(1, 2)> : tensor<2xcomplex<i32>>,
                     e = dense<[(1, -1), (0, 0)]> : tensor<2xcomplex<i8>>} : () -> ()
    """),
    ),
    (
        "attr_dense_nested_nonsplat",
        dedent("""
        "test.op"() {a = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, b = dense<[[[1.0], [2.0]], [[3.0], [4.0]]]> :
                     tensor<2x2x1xf32>, c = dense<[1, 2, 3]> : vector<3xi64>, d = dense<[[0.1, 0.2, 0.3]]> :
                     tensor<1x3xf64>, e = dense<[-8, 7]> : tensor<2xi4>, f = dense<[0, 255]> : tensor<2xui8>,
                     g = dense<[1, 2]> : tensor<2xindex>, h = dense<5> : tensor<i32>, i = dense<[5]> : tensor<1xi32>} : () -> ()
    """),
    ),
    (
        "attr_dense_hex_input",
        dedent("""
        "test.op"() {a = dense<"0x01000000020000000300000004000000"> : tensor<4xi32>,
                     b = dense<"0x01000000"> : tensor<4xi32>, c = dense<"0x0000C03F0000803F"> : tensor<2xf32>,
                     d = dense<"0x0102"> : tensor<2xi8>, e = dense<"0x003C"> : tensor<3xf16>} : () -> ()
    """),
    ),
    (
        "attr_dense_strings",
        dedent("""
        "test.op"() {a = dense<["a", "b\\n"]> : tensor<2x!foo.str>, b = dense<"splat"> : tensor<3x!foo.str>,
                     c = dense<[["x", "y"], ["z", ""]]> : tensor<2x2x!foo.str>, d = dense<"0xAB"> : tensor<!foo.str>,
                     e = dense<["\\01\\FF", "é"]> : tensor<2x!foo.str>} : () -> ()
    """),
    ),
    (
        "attr_dense_empty",
        dedent("""
        "test.op"() {a = dense<> : tensor<0xi32>, b = dense<> : tensor<2x0xf32>, c = dense<[]> : tensor<0xi8>,
                     d = dense<[[], []]> : tensor<2x0xi1>} : () -> ()
    """),
    ),
    (
        "attr_dense_large_100",
        f'"test.op"() {{a = dense<[{dense_values(100)}]> : tensor<100xi32>}} : () -> ()\n',
    ),
    (
        "attr_dense_large_101",
        f'"test.op"() {{a = dense<[{dense_values(101)}]> : tensor<101xi32>}} : () -> ()\n',
    ),
    (
        "attr_dense_large_float",
        dedent(f"""
        "test.op"() {{a = dense<"{big_hex(128, 32)}"> : tensor<128xf32>, b = dense<"{big_hex(120, 16)}"> :
                     tensor<12x10xf16>, c = dense<"{big_hex(101, 64)}"> : tensor<101xf64>}} : () -> ()
    """),
    ),
    (
        "attr_dense_large_bool_complex",
        dedent(f"""
        "test.op"() {{a = dense<[{", ".join(["true", "false", "false"] * 40)}]> : tensor<120xi1>,
                     b = dense<[{", ".join(f"({index}.0, -1.0)" for index in range(60))}]> : tensor<60xcomplex<f32>>,
                     c = dense<[{", ".join(f"({index}.0, -1.0)" for index in range(50))}]> : tensor<50xcomplex<f32>>,
                     d = dense<[{", ".join(f"({index}, 1)" for index in range(50))}]> : tensor<50xcomplex<i16>>}} : () -> ()
    """),
    ),
    (
        "attr_dense_large_splat",
        '"test.op"() {a = dense<2> : tensor<1000x1000xi8>, b = dense<0.5> : tensor<512xf32>} : () -> ()\n',
    ),
    (
        "attr_dense_large_int_types",
        dedent(f"""
        "test.op"() {{a = dense<[{dense_values(128, -64)}]> : tensor<128xi8>, b = dense<[{dense_values(101)}]> :
                     tensor<101xui16>, c = dense<[{dense_values(102, -50)}]> : tensor<102xi64>,
                     d = dense<[{dense_values(110)}]> : tensor<110xindex>, e = dense<[{", ".join(["1", "-2"] * 55)}]> :
                     tensor<110xi4>}} : () -> ()
    """),
    ),
    (
        "attr_dense_array",
        dedent("""
        "test.op"() {a = array<i32: 1, 2>, b = array<f64: 1., 2.>, c = array<i8>, d = array<i1: true, false>,
                     e = array<f32: 1.5, 0.1>, f = array<i64: -1, 9223372036854775807>, g = array<i16: 65535>,
                     h = array<f64: 0x7FF8000000000000, -0.0>, i = array<i64>, j = array<f32>,
                     k = array<i1: true>} : () -> ()
    """),
    ),
    (
        "attr_dense_resource",
        dedent("""
        "test.op"() {a = dense_resource<blob1> : tensor<3xi64>, b = dense_resource<blob2> : tensor<2xf32>} : () -> ()
        {-#
          dialect_resources: {
            builtin: {
              blob1: "0x08000000010000000000000002000000000000000300000000000000",
              blob2: "0x040000000000803F00000040"
            }
          }
        #-}
    """),
    ),
    (
        "attr_dense_resource_unused_and_repeat",
        dedent("""
        "test.op"() {a = dense_resource<x> : tensor<1xi8>, b = dense_resource<x> : tensor<1xi8>} : () -> ()
        {-# dialect_resources: {builtin: {x: "0x0100000007", unused: "0x0100000008"}} #-}
    """),
    ),
    (
        "attr_sparse",
        dedent("""
        "test.op"() {a = sparse<[[0, 0], [1, 2]], [1, 5]> : tensor<3x4xi32>, b = sparse<[[0, 1]], [1.5]> : tensor<2x2xf32>,
                     c = sparse<[0, 2], [true, false]> : tensor<4xi1>, d = sparse<[[1]], 7> : tensor<4xi8>,
                     e = sparse<> : tensor<2xi32>} : () -> ()
    """),
    ),
    (
        "attr_affine_map",
        dedent("""
        "test.op"() {a = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2)>, b = affine_map<() -> ()>,
                     c = affine_map<(d0) -> (d0 * 2 + 1, d0 mod 3, d0 ceildiv 4, -d0, 2 * d0)>,
                     d = affine_map<(i, j) -> (j, i)>, e = affine_map<(d0)[s0, s1] -> (d0 * s0 + s1 - 3)>,
                     f = affine_map<(d0, d1) -> (0, 7)>} : () -> ()
        "test.op2"() {a = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2)>} : () -> ()
    """),
    ),
    (
        "attr_affine_set",
        dedent("""
        "test.op"() {a = affine_set<(d0) : (d0 - 2 >= 0)>, b = affine_set<(d0, d1)[s0] : (d0 - s0 == 0, d1 >= 0)>,
                     c = affine_set<() : (0 == 0)>} : () -> ()
    """),
    ),
    (
        "attr_strided_layout",
        '"test.op"() {a = strided<[4, 1]>, b = strided<[?, 1], offset: ?>, c = strided<[], offset: 3>} : () -> ()\n',
    ),
    (
        "attr_dialect_attrs",
        dedent("""
        "test.op"() {a = #foo.bar<1, [2]>, b = #foo<"x">, c = #arith.overflow<none>, d = #foo.bar, e = #foo<bar<1>>,
                     f = #foo.baz<{k = v}, (x)>, g = #foo<"quote\\" and <angle">, h = #stablehlo<precision DEFAULT>,
                     i = #a.b.c<>, j = #foo.x<"]">} : () -> ()
    """),
    ),
    (
        "attr_location_values",
        '"test.op"() {l = loc("x"), m = [loc("y":1:2)], n = loc(fused["a", "b"])} : () -> ()\n',
    ),
    ("attr_builtin_opaque_attr", '"test.op"() {a = #opaque<"foo", "bar"> : i32} : () -> ()\n'),
    (
        "attr_type_of_typed_attrs",
        dedent("""
        "test.op"() {c = [1 : index, 2 : index], d = 1.0 : f80, e = [1 : i32, 1.0 : f32, 1, 1.0]} : () -> ()
    """),
    ),
]

OPERATION_SNIPPETS: list[tuple[str, str]] = [
    ("op_no_results_no_operands", '"test.op"() : () -> ()\n'),
    (
        "op_without_dialect_prefix",
        '"any_op"() : () -> ()\n"weird.op-name$x"() : () -> ()\n"a.b.c.d"() : () -> ()\n',
    ),
    (
        "op_results_and_uses",
        dedent("""
        %a = "test.def"() : () -> i32
        %b = "test.def"() : () -> f32
        %c = "test.use"(%a, %b, %a) : (i32, f32, i32) -> i64
        "test.use"(%c) : (i64) -> ()
    """),
    ),
    (
        "op_multiple_results",
        dedent("""
        %0:2 = "test.div"() {n = 42 : i64} : () -> (f32, i32)
        %1:3 = "test.three"(%0#1, %0#0) : (i32, f32) -> (i1, i1, i1)
        "test.use"(%1#2, %1#0, %0#1) : (i1, i1, i32) -> ()
    """),
    ),
    (
        "op_multiple_results_some_unused",
        dedent("""
        %x:4 = "test.many"() : () -> (i1, i2, i3, i4)
        "test.use"(%x#3) : (i4) -> ()
        %y = "test.one"() : () -> i8
        %z:2 = "test.two"() : () -> (i8, i8)
    """),
    ),
    ("op_zero_result_group", '%0:1 = "test.one"() : () -> i32\n"test.use"(%0#0) : (i32) -> ()\n'),
    (
        "op_ssa_names_renumbered",
        dedent("""
        %foo = "test.def"() : () -> i32
        %x.y = "test.def"() : () -> i32
        %42 = "test.def"() : () -> i32
        %_$-z = "test.def"() : () -> i32
        "test.use"(%foo, %x.y, %42, %_$-z) : (i32, i32, i32, i32) -> ()
    """),
    ),
    (
        "op_properties_unregistered",
        dedent("""
        "test.op"() <{b = 1, a = 2 : i32}> {d, c = "x"} : () -> ()
        "test.op"() <{}> : () -> ()
        "test.op"() <{only}> ({}) {} : () -> ()
    """),
    ),
    (
        "op_properties_not_aliased",
        dedent("""
        "test.a"() <{m = affine_map<(d0) -> (d0 + 1)>}> : () -> ()
        "test.b"() <{m = affine_map<(d0) -> (d0 + 2)>}> {n = affine_map<(d0) -> (d0 + 3)>} : () -> ()
        "test.c"() <{m = affine_map<(d0) -> (d0 + 4)>}> {n = affine_map<(d0) -> (d0 + 4)>} : () -> ()
        "test.d"() <{s = affine_set<(d0) : (d0 >= 0)>, l = loc("x")}> : () -> ()
    """),
    ),
    (
        "op_attribute_dict_ordering",
        dedent("""
        "test.op"() {zeta = 1, alpha = 2, Beta = 3, beta = 4, _under = 5, a1 = 6, a0 = 7, a10 = 8, "a 2" = 9,
                     "A" = 10} : () -> ()
    """),
    ),
    ("op_empty_region", '"test.op"() ({}) : () -> ()\n"test.op"() ({}, {}) : () -> ()\n'),
    (
        "op_region_single_block",
        dedent("""
        "test.op"() ({
          %0 = "test.def"() : () -> i32
          "test.yield"(%0) : (i32) -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_region_entry_block_args",
        dedent("""
        %r = "test.op"() ({
        ^bb0(%a: i32, %b: f32):
          "test.yield"(%a) : (i32) -> ()
        }) : () -> i32
    """),
    ),
    (
        "op_region_entry_block_label_no_args",
        dedent("""
        "test.op"() ({
        ^entry:
          "test.yield"() : () -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_multiple_regions",
        dedent("""
        %0 = "test.def"() : () -> i1
        "test.if"(%0) ({
          "test.then"() : () -> ()
        }, {
          "test.else"() : () -> ()
        }, {
        }) : (i1) -> ()
    """),
    ),
    (
        "op_nested_regions",
        dedent("""
        %0 = "test.outer"() ({
          %1 = "test.middle"() ({
            %2 = "test.inner"() ({
            ^bb0(%x: i8):
              "test.yield"(%x) : (i8) -> ()
            }) : () -> i8
            "test.yield"(%2) : (i8) -> ()
          }) : () -> i8
          "test.yield"(%1) : (i8) -> ()
        }) : () -> i8
    """),
    ),
    (
        "op_numbering_nested_before_after",
        dedent("""
        %a = "test.first"() : () -> i32
        "test.region"() ({
          %b = "test.inner"() : () -> i32
          "test.use"(%a, %b) : (i32, i32) -> ()
        }) : () -> ()
        %c = "test.last"() : () -> i32
        "test.region"() ({
        ^bb0(%arg: i32):
          %d = "test.inner2"(%arg, %c) : (i32, i32) -> i32
        }) : () -> ()
    """),
    ),
    (
        "op_numbering_sibling_regions",
        dedent("""
        "test.a"() ({
          %0 = "test.x"() : () -> i32
        }) : () -> ()
        "test.b"() ({
          %0 = "test.y"() : () -> i32
        }, {
          %0 = "test.z"() : () -> i32
        }) : () -> ()
        "test.c"() ({
        ^bb0(%p: i32):
          %0 = "test.w"() : () -> i32
        }) : () -> ()
    """),
    ),
    (
        "op_successors_multiple_blocks",
        dedent("""
        "test.func"() ({
        ^bb0(%arg0: i32):
          %c = "test.cond"() : () -> i1
          "test.cond_br"(%c, %arg0) [^bb1, ^bb2] : (i1, i32) -> ()
        ^bb1:
          "test.br"(%arg0) [^bb3] : (i32) -> ()
        ^bb2:
          %x = "test.def"() : () -> i32
          "test.br"(%x) [^bb3] : (i32) -> ()
        ^bb3(%y: i32, %z: i32):
          "test.return"(%y, %z) : (i32, i32) -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_block_args_many_blocks",
        dedent("""
        "test.func"() ({
        ^entry(%a: i64, %b: f64):
          "test.br"() [^second] : () -> ()
        ^second:
          "test.br"() [^loop] : () -> ()
        ^loop(%i: index, %j: index):
          "test.br"() [^loop, ^exit] : () -> ()
        ^exit(%k: i1):
          "test.return"(%a, %i, %k) : (i64, index, i1) -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_unreachable_and_self_loop",
        dedent("""
        "test.func"() ({
          "test.br"() [^bb2] : () -> ()
        ^bb1:
          "test.br"() [^bb1] : () -> ()
        ^bb2:
          "test.return"() : () -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_forward_reference_graph",
        dedent("""
        "test.use"(%later, %later2#1) : (i32, f32) -> ()
        %later = "test.def"() : () -> i32
        %later2:2 = "test.def2"(%later) : (i32) -> (i32, f32)
    """),
    ),
    (
        "op_forward_reference_to_later_block",
        dedent("""
        "test.func"() ({
          "test.br"() [^bb2] : () -> ()
        ^bb1:
          "test.use"(%v) : (i32) -> ()
          "test.return"() : () -> ()
        ^bb2:
          %v = "test.def"() : () -> i32
          "test.br"() [^bb1] : () -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_value_from_enclosing_region",
        dedent("""
        %outer = "test.def"() : () -> i32
        "test.op"() ({
          "test.op"() ({
            "test.use"(%outer) : (i32) -> ()
          }) : () -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_block_without_terminator_empty_block",
        dedent("""
        "test.op"() ({
        ^bb0(%x: i32):
        }) : () -> ()
    """),
    ),
    (
        "op_region_args_types",
        dedent("""
        "test.op"() ({
        ^bb0(%a: tensor<?x4xf32>, %b: memref<*xi8>, %c: !foo.bar<1>, %d: vector<[4]xi1>, %e: tuple<>, %f: none):
          "test.yield"() : () -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_function_type_forms",
        dedent("""
        %0 = "test.one"() : () -> (i32)
        %1 = "test.two"(%0) : (i32) -> ((i32) -> i32)
        "test.three"(%1) : ((i32) -> i32) -> ()
        %2:2 = "test.four"(%0, %0) : (i32, i32) -> (i32, i32)
    """),
    ),
    (
        "op_toplevel_aliases",
        dedent("""
        #alias = [1, 2, 3]
        #dict_alias = {a = 1 : i32}
        !tensor_alias = tensor<4x?xf32>
        !nested_alias = tuple<!tensor_alias, i1>
        #map_alias = affine_map<(d0) -> (d0 + 1)>
        "test.op"() {a = #alias, b = #dict_alias, c = #map_alias, t = !nested_alias} : () -> !tensor_alias
    """),
    ),
    (
        "op_comments",
        dedent("""
        // A leading comment.
        "test.op"() {a = 1} : () -> () // trailing comment
        // "test.commented_out"() : () -> ()
        "test.op"() {b = "// not a comment"} : () -> ()   // another
    """),
    ),
    (
        "op_whitespace_and_newlines",
        (
            '\n\n   "test.op"  (  )   {  a =   1 ,b=2}:(   )->(  )\n%0   :   2=  "test.x"()  :  ()->(i1,i2)\n'
            '"test.y" ( %0#1 )  : ( i2 ) -> ( )\n'
        ),
    ),
    (
        "op_explicit_module_sym_name",
        dedent("""
        "builtin.module"() <{sym_name = "named"}> ({
          "test.op"() : () -> ()
        }) {z.attr = 1 : i32, a.attr = "x"} : () -> ()
    """),
    ),
    (
        "op_explicit_module_visibility",
        dedent("""
        "builtin.module"() <{sym_name = "m", sym_visibility = "private"}> ({
        ^bb0:
        }) : () -> ()
    """),
    ),
    (
        "op_pretty_module_in_plain_context",
        dedent("""
        module @pretty attributes {foo.bar = 1 : i32, foo.baz} {
          "test.op"() : () -> ()
        }
    """),
    ),
    (
        "op_nested_modules",
        dedent("""
        module {
          module @inner {
            module @innermost {
              "test.op"() : () -> ()
            }
          }
          "builtin.module"() ({
          ^bb0:
          }) : () -> ()
          module {
          }
        }
    """),
    ),
    (
        "op_two_toplevel_ops_implicit_module",
        '"test.a"() : () -> ()\n"builtin.module"() ({\n^bb0:\n}) : () -> ()\n',
    ),
    ("op_empty_input", ""),
    (
        "op_symbols_and_symbol_uses",
        dedent("""
        "test.symbol"() <{sym_name = "f", sym_visibility = "nested"}> ({}) : () -> ()
        "test.call"() {callee = @f, nested = @m::@f} : () -> ()
    """),
    ),
    (
        "op_large_region_numbering",
        "".join(f'%v{index} = "test.def"() : () -> i32\n' for index in range(25))
        + '"test.use"(%v0, %v24) : (i32, i32) -> ()\n',
    ),
    (
        "op_operands_of_many_types",
        dedent("""
        %0 = "test.def"() : () -> tensor<*xf32>
        %1 = "test.def"() : () -> !foo.t
        %2 = "test.def"() : () -> memref<2x?xf32, strided<[?, 1]>>
        "test.use"(%0, %1, %2) : (tensor<*xf32>, !foo.t, memref<2x?xf32, strided<[?, 1]>>) -> ()
    """),
    ),
    (
        "op_successor_operands_and_props",
        dedent("""
        "test.func"() ({
        ^bb0(%a: i32):
          "test.switch"(%a, %a, %a) [^bb1, ^bb2, ^bb1] <{case_values = dense<[1, 2]> : tensor<2xi32>}> {x} : (i32, i32, i32) -> ()
        ^bb1:
          "test.return"() : () -> ()
        ^bb2:
          "test.return"() : () -> ()
        }) : () -> ()
    """),
    ),
    (
        "op_deep_block_nesting_preds",
        dedent("""
        "test.func"() ({
          "test.br"() [^bb1] : () -> ()
        ^bb1:
          "test.br"() [^bb2, ^bb3] : () -> ()
        ^bb2:
          "test.br"() [^bb3] : () -> ()
        ^bb3:
          "test.br"() [^bb1, ^bb3, ^bb4] : () -> ()
        ^bb4:
          "test.region"() ({
            "test.br"() [^bb1] : () -> ()
          ^bb1:
            "test.end"() : () -> ()
          }) : () -> ()
          "test.return"() : () -> ()
        }) : () -> ()
    """),
    ),
]

# Custom-form input parsed with jax's registered dialects, printed in generic form.
REGISTERED_SNIPPETS: list[tuple[str, str]] = [
    (
        "custom_func_return",
        dedent("""
        func.func @f(%a: i32, %b: i32) -> i32 {
          %0 = arith.addi %a, %b : i32
          return %0 : i32
        }
    """),
    ),
    (
        "custom_func_siblings_numbering",
        dedent("""
        func.func @first(%x: f32) -> f32 {
          %0 = arith.mulf %x, %x : f32
          return %0 : f32
        }
        func.func @second(%x: f32, %y: f32) -> f32 {
          %0 = arith.addf %x, %y : f32
          %1 = arith.subf %0, %y : f32
          return %1 : f32
        }
        func.func @third() {
          return
        }
    """),
    ),
    (
        "custom_func_private_declaration_attrs",
        dedent("""
        func.func private @decl(i32 {my.arg = 1 : i32}, f32) -> (i64 {my.res}) attributes {llvm.emit_c_interface}
        func.func nested @nested_vis() {
          return
        }
        func.func public @pub(%arg0: tensor<4xf32> {jax.arg_info = "x", mhlo.sharding = "{replicated}"}) -> (tensor<4xf32> {jax.result_info = "out"}) {
          return %arg0 : tensor<4xf32>
        }
    """),
    ),
    (
        "custom_func_call",
        dedent("""
        func.func private @callee(i32) -> (i32, i1)
        func.func @caller(%a: i32) -> i1 {
          %0:2 = call @callee(%a) : (i32) -> (i32, i1)
          %1:2 = func.call @callee(%0#0) : (i32) -> (i32, i1)
          %2 = func.constant @callee : (i32) -> (i32, i1)
          %3:2 = call_indirect %2(%1#0) : (i32) -> (i32, i1)
          return %3#1 : i1
        }
    """),
    ),
    (
        "custom_arith_constants",
        dedent("""
        func.func @constants() -> (i32, i1, index, f32, f64, f16, bf16, tensor<2xi32>, vector<4xf32>, i8) {
          %0 = arith.constant 42 : i32
          %1 = arith.constant true
          %2 = arith.constant 7 : index
          %3 = arith.constant 1.5 : f32
          %4 = arith.constant 0.1 : f64
          %5 = arith.constant 0x7C00 : f16
          %6 = arith.constant -0.0 : bf16
          %7 = arith.constant dense<[1, 2]> : tensor<2xi32>
          %8 = arith.constant dense<0.5> : vector<4xf32>
          %9 = arith.constant 255 : i8
          return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i32, i1, index, f32, f64, f16, bf16, tensor<2xi32>, vector<4xf32>, i8
        }
    """),
    ),
    (
        "custom_arith_integer_ops",
        dedent("""
        func.func @ints(%a: i32, %b: i32) -> i32 {
          %0 = arith.addi %a, %b overflow<nsw> : i32
          %1 = arith.subi %0, %b overflow<nsw, nuw> : i32
          %2 = arith.muli %1, %a : i32
          %3 = arith.divsi %2, %b : i32
          %4 = arith.divui %3, %b : i32
          %5 = arith.remsi %4, %b : i32
          %6 = arith.remui %5, %b : i32
          %7 = arith.andi %6, %a : i32
          %8 = arith.ori %7, %a : i32
          %9 = arith.xori %8, %a : i32
          %10 = arith.shli %9, %b : i32
          %11 = arith.shrsi %10, %b : i32
          %12 = arith.shrui %11, %b : i32
          %13 = arith.maxsi %12, %a : i32
          %14 = arith.minui %13, %a : i32
          %15 = arith.ceildivsi %14, %b : i32
          %16 = arith.floordivsi %15, %b : i32
          return %16 : i32
        }
    """),
    ),
    (
        "custom_arith_float_ops",
        dedent("""
        func.func @floats(%a: f32, %b: f32) -> f32 {
          %0 = arith.addf %a, %b : f32
          %1 = arith.subf %0, %b fastmath<fast> : f32
          %2 = arith.mulf %1, %a fastmath<nnan, ninf> : f32
          %3 = arith.divf %2, %b : f32
          %4 = arith.remf %3, %b : f32
          %5 = arith.negf %4 : f32
          %6 = arith.maximumf %5, %a : f32
          %7 = arith.minimumf %6, %a : f32
          %8 = arith.maxnumf %7, %a : f32
          return %8 : f32
        }
    """),
    ),
    (
        "custom_arith_cmp_select",
        dedent("""
        func.func @cmp(%a: i32, %b: i32, %x: f64, %y: f64) -> (i1, i1, i32) {
          %0 = arith.cmpi slt, %a, %b : i32
          %1 = arith.cmpi uge, %a, %b : i32
          %2 = arith.cmpf olt, %x, %y : f64
          %3 = arith.cmpf une, %x, %y : f64
          %4 = arith.select %0, %a, %b : i32
          %5 = arith.andi %1, %2 : i1
          %6 = arith.ori %5, %3 : i1
          return %6, %0, %4 : i1, i1, i32
        }
    """),
    ),
    (
        "custom_arith_casts",
        dedent("""
        func.func @casts(%a: i8, %b: f32, %c: index, %d: i32) -> (i32, i64, i4, f64, i32, index, f16, f32, i32) {
          %0 = arith.extsi %a : i8 to i32
          %1 = arith.extui %a : i8 to i64
          %2 = arith.trunci %a : i8 to i4
          %3 = arith.sitofp %a : i8 to f64
          %4 = arith.fptosi %b : f32 to i32
          %5 = arith.index_cast %d : i32 to index
          %6 = arith.truncf %b : f32 to f16
          %7 = arith.bitcast %d : i32 to f32
          %8 = arith.index_cast %c : index to i32
          return %0, %1, %2, %3, %4, %5, %6, %7, %8 : i32, i64, i4, f64, i32, index, f16, f32, i32
        }
    """),
    ),
    (
        "custom_arith_vector_tensor_operands",
        dedent("""
        func.func @shaped(%a: vector<4xi32>, %b: tensor<2x?xf32>) -> (vector<4xi32>, tensor<2x?xf32>, vector<4xi1>) {
          %0 = arith.addi %a, %a : vector<4xi32>
          %1 = arith.mulf %b, %b : tensor<2x?xf32>
          %2 = arith.cmpi eq, %a, %0 : vector<4xi32>
          return %0, %1, %2 : vector<4xi32>, tensor<2x?xf32>, vector<4xi1>
        }
    """),
    ),
    (
        "custom_cf_branches",
        dedent("""
        func.func @branches(%c: i1, %a: i32) -> i32 {
          cf.cond_br %c, ^bb1(%a : i32), ^bb2
        ^bb1(%x: i32):
          cf.br ^bb3(%x : i32)
        ^bb2:
          %0 = arith.constant 0 : i32
          cf.br ^bb3(%0 : i32)
        ^bb3(%r: i32):
          return %r : i32
        }
    """),
    ),
    (
        "custom_cf_switch_assert",
        dedent("""
        func.func @switch(%flag: i32, %c: i1) {
          cf.assert %c, "must hold \\"really\\""
          cf.switch %flag : i32, [
            default: ^bb1,
            42: ^bb2,
            -7: ^bb1
          ]
        ^bb1:
          return
        ^bb2:
          return
        }
    """),
    ),
    (
        "custom_scf_for_if",
        dedent("""
        func.func @loop(%lb: index, %ub: index, %step: index, %init: f32) -> f32 {
          %sum = scf.for %i = %lb to %ub step %step iter_args(%acc = %init) -> (f32) {
            %c = arith.cmpi slt, %i, %ub : index
            %next = scf.if %c -> (f32) {
              %t = arith.addf %acc, %acc : f32
              scf.yield %t : f32
            } else {
              scf.yield %acc : f32
            }
            scf.yield %next : f32
          }
          return %sum : f32
        }
    """),
    ),
    (
        "custom_scf_while",
        dedent("""
        func.func @while(%n: i32) -> i32 {
          %r = scf.while (%arg = %n) : (i32) -> i32 {
            %zero = arith.constant 0 : i32
            %c = arith.cmpi sgt, %arg, %zero : i32
            scf.condition(%c) %arg : i32
          } do {
          ^bb0(%arg: i32):
            %one = arith.constant 1 : i32
            %next = arith.subi %arg, %one : i32
            scf.yield %next : i32
          }
          return %r : i32
        }
    """),
    ),
    (
        "custom_memref_tensor",
        dedent("""
        func.func @memref(%m: memref<4x?xf32>, %i: index) -> (f32, tensor<4x?xf32>) {
          %c0 = arith.constant 0 : index
          %v = memref.load %m[%c0, %i] : memref<4x?xf32>
          %alloc = memref.alloc(%i) {alignment = 64 : i64} : memref<?xf32, 1>
          memref.store %v, %alloc[%c0] : memref<?xf32, 1>
          memref.dealloc %alloc : memref<?xf32, 1>
          %t = tensor.empty(%i) : tensor<4x?xf32>
          %cast = memref.cast %m : memref<4x?xf32> to memref<?x?xf32>
          return %v, %t : f32, tensor<4x?xf32>
        }
    """),
    ),
    (
        "custom_vector_math",
        dedent("""
        func.func @vm(%v: vector<4xf32>, %s: f32) -> (vector<4xf32>, f32) {
          %b = vector.broadcast %s : f32 to vector<4xf32>
          %f = vector.fma %v, %b, %v : vector<4xf32>
          %r = vector.reduction <add>, %f : vector<4xf32> into f32
          %e = math.exp %f : vector<4xf32>
          %t = math.tanh %r : f32
          return %e, %t : vector<4xf32>, f32
        }
    """),
    ),
    (
        "custom_stablehlo_pretty",
        dedent("""
        module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
          func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = ""}) {
            %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
            %cst = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
            %1 = stablehlo.multiply %0, %cst : tensor<4xf32>
            %2 = stablehlo.compare  GT, %1, %arg0,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
            %3 = stablehlo.select %2, %1, %arg0 : tensor<4xi1>, tensor<4xf32>
            return %3 : tensor<4xf32>
          }
        }
    """),
    ),
    (
        "custom_stablehlo_tokens_tuples",
        dedent("""
        func.func @tokens(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tuple<tensor<2xf32>, tensor<i32>>) {
          %t2 = stablehlo.after_all %t, %t : !stablehlo.token
          %c = stablehlo.constant dense<1> : tensor<i32>
          %tup = stablehlo.tuple %x, %c : tuple<tensor<2xf32>, tensor<i32>>
          return %t2, %tup : !stablehlo.token, tuple<tensor<2xf32>, tensor<i32>>
        }
    """),
    ),
    (
        "custom_chlo_ops",
        dedent("""
        func.func @chlo(%x: tensor<4xf32>, %y: tensor<1xf32>) -> tensor<4xf32> {
          %0 = chlo.erf_inv %x : tensor<4xf32> -> tensor<4xf32>
          %1 = chlo.broadcast_add %0, %y : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
          return %1 : tensor<4xf32>
        }
    """),
    ),
    (
        "custom_llvm_dialect",
        dedent("""
        llvm.func @llvm_add(%a: i32, %b: i32) -> i32 {
          %0 = llvm.add %a, %b : i32
          %1 = llvm.mlir.constant(3 : i64) : i64
          %2 = llvm.alloca %1 x i32 : (i64) -> !llvm.ptr
          llvm.store %0, %2 : i32, !llvm.ptr
          llvm.return %0 : i32
        }
        llvm.mlir.global internal constant @str("hello\\00") {addr_space = 0 : i32} : !llvm.array<6 x i8>
    """),
    ),
    (
        "custom_mixed_with_unregistered",
        dedent("""
        func.func @mixed(%a: i32) -> i32 {
          %0 = "test.opaque"(%a) {note = "unregistered op in a registered function"} : (i32) -> i32
          %1 = arith.addi %0, %a : i32
          "test.region_op"(%1) ({
          ^bb0(%x: i32):
            %2 = arith.muli %x, %x : i32
            "test.yield"(%2) : (i32) -> ()
          }) : (i32) -> ()
          return %1 : i32
        }
    """),
    ),
    (
        "custom_generic_registered_attrs_dict",
        dedent("""
        "func.func"() ({
          "func.return"() : () -> ()
        }) {function_type = () -> (), sym_name = "in_attr_dict", sym_visibility = "private"} : () -> ()
        %0 = "arith.constant"() {value = 5 : i32} : () -> i32
    """),
    ),
    (
        "custom_arith_overflow_properties",
        dedent("""
        func.func @ov(%a: i64) -> i64 {
          %0 = "arith.addi"(%a, %a) <{overflowFlags = #arith.overflow<nuw>}> : (i64, i64) -> i64
          %1 = arith.muli %0, %0 overflow<nsw, nuw> : i64
          return %1 : i64
        }
    """),
    ),
]


def generate_snippets(writer: Writer) -> None:
    for table in (TYPE_SNIPPETS, ATTRIBUTE_SNIPPETS, OPERATION_SNIPPETS):
        for name, text in table:
            attempt("generic", name, lambda t=text: {".mlir": parse_and_print(t, registered=False)}, writer)
    for name, text in REGISTERED_SNIPPETS:
        attempt(
            "generic",
            name,
            lambda t=text: {".mlir": plain_fixed_point(parse_and_print(t, registered=True))},
            writer,
        )


# ----------------------------------------------------------------------------------------------------------
# 2. debug-info printing (locations)
# ----------------------------------------------------------------------------------------------------------

DEBUGINFO_SNIPPETS: list[tuple[str, str]] = [
    ("implicit_locations", '"test.a"() : () -> ()\n  "test.b"() : () -> ()\n%0 = "test.c"() : () -> i32\n'),
    ("unknown", '"test.op"() : () -> () loc(unknown)\n'),
    (
        "file_line_col",
        '"test.op"() : () -> () loc("file.mlir":3:7)\n"test.op"() : () -> () loc("/abs/path/x.py":100:0)\n',
    ),
    (
        "file_line_col_range",
        dedent("""
        "test.a"() : () -> () loc("f.py":1:2 to :5)
        "test.b"() : () -> () loc("f.py":1:2 to 3:4)
        "test.c"() : () -> () loc("f.py":7)
        "test.d"() : () -> () loc("f.py":1:2 to 1:2)
    """),
    ),
    ("name", '"test.op"() : () -> () loc("just a name")\n"test.op"() : () -> () loc("")\n'),
    (
        "name_with_child",
        dedent("""
        "test.a"() : () -> () loc("name"("f.py":1:2))
        "test.b"() : () -> () loc("outer"("inner"("f.py":3:4)))
        "test.c"() : () -> () loc("n"(unknown))
        "test.d"() : () -> () loc("n"(callsite("a" at "b")))
    """),
    ),
    (
        "callsite",
        dedent("""
        "test.a"() : () -> () loc(callsite("callee" at "caller"))
        "test.b"() : () -> () loc(callsite("f.py":1:1 at callsite("g.py":2:2 at "h.py":3:3)))
        "test.c"() : () -> () loc(callsite(callsite("a" at "b") at "c"))
        "test.d"() : () -> () loc(callsite(unknown at "x"))
    """),
    ),
    (
        "fused",
        dedent("""
        "test.a"() : () -> () loc(fused["a", "b"])
        "test.b"() : () -> () loc(fused<"meta">["a":1:1, "b"])
        "test.c"() : () -> () loc(fused<#foo.meta<1>>["x", "y":2:3])
        "test.d"() : () -> () loc(fused<{k = 1 : i32}>["z"])
    """),
    ),
    (
        "fused_canonicalization",
        dedent("""
        "test.a"() : () -> () loc(fused[])
        "test.b"() : () -> () loc(fused["only"])
        "test.c"() : () -> () loc(fused[fused["a", "b"], "c"])
        "test.d"() : () -> () loc(fused["a", "a", unknown])
        "test.e"() : () -> () loc(fused<"m">[unknown])
        "test.f"() : () -> () loc(fused<"m">[])
        "test.g"() : () -> () loc(fused[unknown, unknown])
        "test.h"() : () -> () loc(fused<"m">[fused<"m">["p", "q"], "r"])
        "test.i"() : () -> () loc(fused<"m">[fused<"n">["p", "q"], "r"])
        "test.j"() : () -> () loc(fused[fused<"m">["p"], "r"])
        "test.k"() : () -> () loc(fused<"m">[fused["p", "q"], "r"])
    """),
    ),
    (
        "block_argument_locations",
        dedent("""
        "test.func"() ({
        ^bb0(%a: i32 loc("arg_a"), %b: f32 loc("f.py":9:9), %c: i1):
          "test.br"(%a)[^bb1] : (i32) -> () loc("br")
        ^bb1(%d: i32 loc(fused["x", "y"]), %e: i64 loc(unknown)):
          "test.return"() : () -> () loc("ret")
        }) : () -> () loc("func")
    """),
    ),
    (
        "block_argument_location_shared_with_op",
        dedent("""
        "test.func"() ({
        ^bb0(%a: i32 loc("shared"), %b: i32 loc("shared")):
          "test.use"(%a, %b) : (i32, i32) -> () loc("shared")
        }) : () -> ()
    """),
    ),
    (
        "location_aliases_in_input",
        dedent("""
        #loc_a = loc("a.py":1:1)
        #loc_b = loc("b")
        #loc_fused = loc(fused[#loc_a, #loc_b])
        "test.a"() : () -> () loc(#loc_a)
        "test.b"() : () -> () loc(#loc_fused)
        "test.c"() : () -> () loc(callsite(#loc_b at #loc_a))
    """),
    ),
    (
        "repeated_locations_dedup",
        dedent("""
        "test.a"() : () -> () loc("same":1:1)
        "test.b"() : () -> () loc("same":1:1)
        "test.c"() : () -> () loc(callsite("same":1:1 at "same":1:1))
        "test.d"() : () -> () loc("other")
    """),
    ),
    (
        "many_locations_numbering",
        "".join(f'"test.op{index}"() : () -> () loc("f.py":{index}:1)\n' for index in range(14)),
    ),
    (
        "explicit_module_location",
        dedent("""
        "builtin.module"() ({
          "test.op"() : () -> () loc("inner")
        }) : () -> () loc("the module")
    """),
    ),
    ("custom_pretty_module_location", 'module @m {\n  "test.op"() : () -> ()\n} loc("module.mlir":1:1)\n'),
    (
        "escaped_filenames",
        dedent(r"""
        "test.a"() : () -> () loc("we\"ird\nname":1:2)
        "test.b"() : () -> () loc("caf\C3\A9 ☃")
        "test.c"() : () -> () loc("tab\there"("x\\y":3:4))
    """),
    ),
    (
        "nested_region_locations",
        dedent("""
        %0 = "test.outer"() ({
          %1 = "test.inner"() ({
            "test.innermost"() : () -> () loc("deep")
          }) : () -> i32 loc("mid")
          "test.yield"(%1) : (i32) -> ()
        }) : () -> i32 loc("top")
        "test.after"(%0) : (i32) -> ()
    """),
    ),
    (
        "multi_result_and_properties",
        dedent("""
        %0:2 = "test.two"() <{p = 1}> {a = "x"} : () -> (i1, i2) loc("two")
        "test.succ"(%0#1) ({
          "test.br"()[^bb1] : () -> () loc("br")
        ^bb1:
          "test.end"() : () -> ()
        }) : (i2) -> () loc(callsite("succ" at "caller":4:2))
    """),
    ),
    (
        "attributes_and_aliases_mixed",
        dedent("""
        "test.op"() {m = affine_map<(d0) -> (d0)>, s = affine_set<(d0) : (d0 >= 0)>} : () -> () loc("with maps")
        "test.op"() {m = affine_map<(d0) -> (d0 + 1)>} : () -> () loc(fused<affine_map<(d0) -> (d0)>>["x"])
    """),
    ),
    (
        "forward_reference_locations",
        dedent("""
        "test.use"(%0) : (i32) -> () loc("use")
        %0 = "test.def"() : () -> i32 loc("def")
    """),
    ),
    ("comments_shift_columns", '// comment line\n\n    "test.op"() : () -> ()\n\t"test.tab"() : () -> ()\n'),
    ("empty_module", ""),
    (
        "name_and_callsite_with_fused_children",
        dedent("""
        "test.a"() : () -> () loc("n"(fused["a", "b"]))
        "test.b"() : () -> () loc(callsite(fused["a", "b"] at "c"))
        "test.c"() : () -> () loc(fused<"m">[callsite("a" at "b"), "n"("a")])
    """),
    ),
    (
        "line_column_extremes",
        '"test.a"() : () -> () loc("f":4294967295:4294967295)\n"test.b"() : () -> () loc("f":0:0)\n',
    ),
    (
        "location_as_attribute_value",
        dedent("""
        "test.a"() {l = loc("x"), m = [loc("y":1:2)]} : () -> () loc("op")
    """),
    ),
    (
        "dense_resource_with_locations",
        dedent("""
        "test.op"() {a = dense_resource<blob> : tensor<2xi8>} : () -> () loc("res")
        {-# dialect_resources: {builtin: {blob: "0x010000000102"}} #-}
    """),
    ),
]

DEBUGINFO_REGISTERED_SNIPPETS: list[tuple[str, str]] = [
    (
        "custom_func_argument_locations",
        dedent("""
        func.func @f(%a: i32 loc("arg_a":1:1), %b: i32 loc("arg_b")) -> i32 {
          %0 = arith.addi %a, %b : i32 loc("add")
          return %0 : i32 loc(unknown)
        } loc("func_f")
        func.func private @decl(i32) loc("decl")
    """),
    ),
    (
        "custom_func_implicit_locations",
        dedent("""
        func.func @f(%a: f32) -> f32 {
          %0 = arith.mulf %a, %a : f32
          %1 = arith.addf %0, %a : f32
          return %1 : f32
        }
        func.func @g() {
          return
        }
    """),
    ),
    (
        "custom_cf_blocks_locations",
        dedent("""
        func.func @f(%c: i1 loc("c")) -> i32 {
          cf.cond_br %c, ^bb1, ^bb2 loc("branch")
        ^bb1:
          %0 = arith.constant 1 : i32 loc("one")
          cf.br ^bb3(%0 : i32)
        ^bb2:
          %1 = arith.constant 2 : i32 loc("two")
          cf.br ^bb3(%1 : i32)
        ^bb3(%r: i32 loc("merge_arg")):
          return %r : i32
        }
    """),
    ),
    (
        "custom_scf_locations",
        dedent("""
        func.func @f(%n: index) -> f32 {
          %c0 = arith.constant 0 : index loc("c0")
          %c1 = arith.constant 1 : index loc("c1")
          %init = arith.constant 0.0 : f32 loc(fused["init", "zero"])
          %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
            %x = arith.addf %acc, %acc : f32 loc(callsite("body" at "loop"))
            scf.yield %x : f32
          } loc("for")
          return %r : f32
        }
    """),
    ),
]


def jax_debuginfo_text(function: Callable, specs: list) -> str:
    """JAX's debug print, with this script's folder and site-packages paths cut from file names."""
    previous = jax.config.jax_traceback_in_locations_limit
    jax.config.update("jax_traceback_in_locations_limit", 3)
    try:
        text = generic(jax.jit(function).lower(*specs).compiler_ir("stablehlo"), debug=True)
    finally:
        jax.config.update("jax_traceback_in_locations_limit", previous)
    text = text.replace(SCRIPT_DIR_TEXT + "/", "")
    return re.sub(r'"[^"]*/site-packages/', '"', text)


DEBUGINFO_JAX_CASES: list[tuple[str, Callable, list]] = [
    ("jax_add_mul", lambda x, y: (x + y, x * y), [F32_4, F32_4]),
    ("jax_tanh_matmul", lambda x, w: jnp.tanh(x @ w), [F32_3x4, spec((4, 2))]),
    ("jax_softmax", jax.nn.softmax, [F32_3x4]),
    ("jax_cond", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), [spec((), jnp.bool_), F32_4]),
    ("jax_scan", _scan_cumulative, [F32_4]),
    ("jax_grad", jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2)), [F32_4]),
    ("jax_nested_jit", lambda x: _inner_jitted(x) + 1.0, [F32_4]),
    ("jax_while", _while_collatz, [spec((), jnp.int32)]),
    (
        "jax_pytree_sort",
        lambda d: {"s": jnp.sort(d["a"]), "i": jnp.argsort(d["b"])},
        [{"a": F32_4, "b": I32_4}],
    ),
    ("jax_linalg_cholesky", jnp.linalg.cholesky, [spec((3, 3))]),
]


def debuginfo_files(text: str, registered: bool) -> dict[str, str]:
    printed = plain_fixed_point(parse_and_print(text, registered, debug=True), debug=True)
    return {".input.mlir": text, ".mlir": printed}


def generate_debuginfo(writer: Writer) -> None:
    for name, text in DEBUGINFO_SNIPPETS:
        attempt("debuginfo", name, lambda t=text: debuginfo_files(t, registered=False), writer)
    for name, text in DEBUGINFO_REGISTERED_SNIPPETS:
        attempt("debuginfo", name, lambda t=text: debuginfo_files(t, registered=True), writer)
    for name, function, specs in DEBUGINFO_JAX_CASES:
        attempt(
            "debuginfo",
            name,
            lambda f=function, s=specs: debuginfo_files(jax_debuginfo_text(f, s), True),
            writer,
        )


# ----------------------------------------------------------------------------------------------------------
# 3. pretty (custom-form) printing of builtin / func / arith
# ----------------------------------------------------------------------------------------------------------

CMPI_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF_PREDICATES = [
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
]


def unary_chain_function(name: str, arg_type: str, lines: list[tuple[str, str]]) -> str:
    """A function of one argument ``%x`` returning the result of every ``(expression, type)`` line."""
    body = "".join(f"  %r{index} = {expression}\n" for index, (expression, _) in enumerate(lines))
    results = ", ".join(f"%r{index}" for index in range(len(lines)))
    types = ", ".join(result_type for _, result_type in lines)
    return f"func.func @{name}(%x: {arg_type}, %y: {arg_type}) -> ({types}) {{\n{body}  return {results} : {types}\n}}\n"


PRETTY_SNIPPETS: list[tuple[str, str]] = [
    ("empty_module", "module {\n}\n"),
    ("named_module_with_attributes", "module @named attributes {my.flag, my.value = 3 : i32} {\n}\n"),
    ("function_empty", "func.func @f() {\n  return\n}\n"),
    (
        "function_visibility",
        dedent("""
        func.func public @pub() {
          return
        }
        func.func private @priv() {
          return
        }
        func.func nested @nest() {
          return
        }
        func.func private @decl(i32, f32) -> i64
    """),
    ),
    (
        "function_arg_result_attrs",
        dedent("""
        func.func @attrs(%a: i32 {my.arg, my.n = 1 : i64}, %b: f32) -> (i32 {my.res = "r"}, f32) attributes {my.fn} {
          return %a, %b : i32, f32
        }
        func.func private @decl_attrs(i32 {my.arg}) -> (i64 {my.res})
    """),
    ),
    (
        "function_many_results_and_types",
        dedent("""
        func.func @types(%a: index, %b: i1, %c: f16, %d: bf16, %e: tensor<4xf32>, %f: vector<2xi8>, %g: tensor<*xi32>, %h: memref<?xf32>) -> (index, i1, f16, bf16, tensor<4xf32>, vector<2xi8>, tensor<*xi32>, memref<?xf32>) {
          return %a, %b, %c, %d, %e, %f, %g, %h : index, i1, f16, bf16, tensor<4xf32>, vector<2xi8>, tensor<*xi32>, memref<?xf32>
        }
    """),
    ),
    (
        "function_calls",
        dedent("""
        func.func private @ext(i32) -> (i32, i32)
        func.func @callee(%a: i32) -> i32 {
          return %a : i32
        }
        func.func @caller(%a: i32) -> i32 {
          %0 = call @callee(%a) : (i32) -> i32
          %1:2 = call @ext(%0) : (i32) -> (i32, i32)
          call @nothing() : () -> ()
          return %1#1 : i32
        }
        func.func @nothing() {
          return
        }
    """),
    ),
    (
        "constants_integer_names",
        dedent("""
        func.func @ints() -> (i32, i32, i64, i8, i1, i1, index, index, i16, i32) {
          %a = arith.constant 42 : i32
          %b = arith.constant -1 : i32
          %c = arith.constant 7 : i64
          %d = arith.constant 255 : i8
          %e = arith.constant true
          %f = arith.constant false
          %g = arith.constant 0 : index
          %h = arith.constant 13 : index
          %i = arith.constant 0 : i16
          %j = arith.constant 42 : i32
          return %a, %b, %c, %d, %e, %f, %g, %h, %i, %j : i32, i32, i64, i8, i1, i1, index, index, i16, i32
        }
    """),
    ),
    (
        "constants_float_and_dense_names",
        dedent("""
        func.func @floats() -> (f32, f64, f16, bf16, f32, tensor<4xf32>, tensor<2xi32>, vector<3xi1>, f32) {
          %a = arith.constant 1.5 : f32
          %b = arith.constant 0.1 : f64
          %c = arith.constant 0x7C00 : f16
          %d = arith.constant -0.0 : bf16
          %e = arith.constant 0x7FC00000 : f32
          %f = arith.constant dense<2.0> : tensor<4xf32>
          %g = arith.constant dense<[1, 2]> : tensor<2xi32>
          %h = arith.constant dense<[true, false, true]> : vector<3xi1>
          %i = arith.constant 1.5 : f32
          return %a, %b, %c, %d, %e, %f, %g, %h, %i : f32, f64, f16, bf16, f32, tensor<4xf32>, tensor<2xi32>, vector<3xi1>, f32
        }
    """),
    ),
    (
        "integer_binary_ops",
        unary_chain_function(
            "int_ops",
            "i32",
            [
                (f"arith.{op} %x, %y : i32", "i32")
                for op in [
                    "addi",
                    "subi",
                    "muli",
                    "divsi",
                    "divui",
                    "remsi",
                    "remui",
                    "andi",
                    "ori",
                    "xori",
                    "shli",
                    "shrsi",
                    "shrui",
                    "maxsi",
                    "minsi",
                    "maxui",
                    "minui",
                    "ceildivsi",
                    "floordivsi",
                    "ceildivui",
                ]
            ],
        ),
    ),
    (
        "integer_overflow_flags",
        unary_chain_function(
            "overflow",
            "i64",
            [
                ("arith.addi %x, %y overflow<nsw> : i64", "i64"),
                ("arith.subi %x, %y overflow<nuw> : i64", "i64"),
                ("arith.muli %x, %y overflow<nsw, nuw> : i64", "i64"),
                ("arith.shli %x, %y overflow<nsw> : i64", "i64"),
                ("arith.addi %x, %y overflow<none> : i64", "i64"),
            ],
        ),
    ),
    (
        "float_binary_ops",
        unary_chain_function(
            "float_ops",
            "f32",
            [
                (f"arith.{op} %x, %y : f32", "f32")
                for op in [
                    "addf",
                    "subf",
                    "mulf",
                    "divf",
                    "remf",
                    "maximumf",
                    "minimumf",
                    "maxnumf",
                    "minnumf",
                ]
            ]
            + [("arith.negf %x : f32", "f32")],
        ),
    ),
    (
        "float_fastmath_flags",
        unary_chain_function(
            "fastmath",
            "f64",
            [
                ("arith.addf %x, %y fastmath<fast> : f64", "f64"),
                ("arith.mulf %x, %y fastmath<nnan, ninf> : f64", "f64"),
                ("arith.subf %x, %y fastmath<reassoc, contract> : f64", "f64"),
                ("arith.negf %x fastmath<nsz> : f64", "f64"),
                ("arith.divf %x, %y fastmath<none> : f64", "f64"),
                ("arith.cmpf olt, %x, %y fastmath<nnan> : f64", "i1"),
            ],
        ),
    ),
    (
        "cmpi_all_predicates",
        unary_chain_function(
            "cmpi", "i32", [(f"arith.cmpi {predicate}, %x, %y : i32", "i1") for predicate in CMPI_PREDICATES]
        ),
    ),
    (
        "cmpi_index_and_vector",
        unary_chain_function(
            "cmpi_shaped",
            "vector<4xindex>",
            [
                (f"arith.cmpi {predicate}, %x, %y : vector<4xindex>", "vector<4xi1>")
                for predicate in ("eq", "ult", "sge")
            ],
        ),
    ),
    (
        "cmpf_all_predicates",
        unary_chain_function(
            "cmpf", "f32", [(f"arith.cmpf {predicate}, %x, %y : f32", "i1") for predicate in CMPF_PREDICATES]
        ),
    ),
    (
        "select_forms",
        dedent("""
        func.func @select(%c: i1, %x: i32, %y: i32, %vc: vector<4xi1>, %vx: vector<4xf32>, %tx: tensor<2xf32>) -> (i32, vector<4xf32>, tensor<2xf32>) {
          %0 = arith.select %c, %x, %y : i32
          %1 = arith.select %vc, %vx, %vx : vector<4xi1>, vector<4xf32>
          %2 = arith.select %c, %tx, %tx : tensor<2xf32>
          return %0, %1, %2 : i32, vector<4xf32>, tensor<2xf32>
        }
    """),
    ),
    (
        "integer_casts",
        dedent("""
        func.func @int_casts(%a: i8, %b: i64, %c: index, %d: i32) -> (i32, i64, i4, index, i32, index, i32) {
          %0 = arith.extsi %a : i8 to i32
          %1 = arith.extui %a : i8 to i64
          %2 = arith.trunci %b : i64 to i4
          %3 = arith.index_cast %d : i32 to index
          %4 = arith.index_cast %c : index to i32
          %5 = arith.index_castui %d : i32 to index
          %6 = arith.trunci %b overflow<nsw> : i64 to i32
          return %0, %1, %2, %3, %4, %5, %6 : i32, i64, i4, index, i32, index, i32
        }
    """),
    ),
    (
        "float_casts",
        dedent("""
        func.func @float_casts(%a: i32, %b: f32, %c: f64, %d: f16) -> (f32, f64, i32, i16, f64, f16, f32, i32, bf16) {
          %0 = arith.sitofp %a : i32 to f32
          %1 = arith.uitofp %a : i32 to f64
          %2 = arith.fptosi %b : f32 to i32
          %3 = arith.fptoui %c : f64 to i16
          %4 = arith.extf %b : f32 to f64
          %5 = arith.truncf %c : f64 to f16
          %6 = arith.extf %d : f16 to f32
          %7 = arith.bitcast %b : f32 to i32
          %8 = arith.truncf %b : f32 to bf16
          return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f64, i32, i16, f64, f16, f32, i32, bf16
        }
    """),
    ),
    (
        "shaped_operands",
        dedent("""
        func.func @shaped(%a: tensor<2x3xf32>, %b: vector<4xi32>, %c: tensor<?xi64>) -> (tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>, vector<4xf32>) {
          %0 = arith.addf %a, %a : tensor<2x3xf32>
          %1 = arith.muli %b, %b : vector<4xi32>
          %2 = arith.subi %c, %c : tensor<?xi64>
          %3 = arith.sitofp %b : vector<4xi32> to vector<4xf32>
          return %0, %1, %2, %3 : tensor<2x3xf32>, vector<4xi32>, tensor<?xi64>, vector<4xf32>
        }
    """),
    ),
    (
        "several_functions_numbering",
        dedent("""
        func.func @a(%x: i32) -> i32 {
          %c1 = arith.constant 1 : i32
          %0 = arith.addi %x, %c1 : i32
          return %0 : i32
        }
        func.func @b(%x: i32, %y: i32) -> i32 {
          %0 = arith.muli %x, %y : i32
          %1 = arith.muli %0, %y : i32
          %2 = call @a(%1) : (i32) -> i32
          return %2 : i32
        }
        func.func @c() -> f32 {
          %cst = arith.constant 2.5 : f32
          return %cst : f32
        }
    """),
    ),
    (
        "nested_modules",
        dedent("""
        module @outer {
          module @inner attributes {my.attr} {
            func.func @f() {
              return
            }
          }
          func.func @g() {
            return
          }
        }
    """),
    ),
    (
        "long_expression_chain",
        dedent("""
        func.func @poly(%x: f64) -> f64 {
          %c0 = arith.constant 1.0 : f64
          %c1 = arith.constant -2.5 : f64
          %c2 = arith.constant 0.125 : f64
          %0 = arith.mulf %x, %c2 : f64
          %1 = arith.addf %0, %c1 : f64
          %2 = arith.mulf %1, %x : f64
          %3 = arith.addf %2, %c0 : f64
          %4 = arith.negf %3 : f64
          %5 = arith.maximumf %4, %x : f64
          %6 = arith.minimumf %5, %c0 : f64
          return %6 : f64
        }
    """),
    ),
    (
        "bool_logic",
        dedent("""
        func.func @logic(%a: i1, %b: i1) -> (i1, i1, i1, i1) {
          %true = arith.constant true
          %0 = arith.andi %a, %b : i1
          %1 = arith.ori %a, %b : i1
          %2 = arith.xori %a, %true : i1
          %3 = arith.cmpi eq, %a, %b : i1
          return %0, %1, %2, %3 : i1, i1, i1, i1
        }
    """),
    ),
    (
        "mixed_width_integers",
        dedent("""
        func.func @widths(%a: i1, %b: i7, %c: i128, %d: i0) -> (i64, i128, i7, i0) {
          %0 = arith.extui %a : i1 to i64
          %1 = arith.muli %c, %c : i128
          %2 = arith.addi %b, %b : i7
          return %0, %1, %2, %d : i64, i128, i7, i0
        }
    """),
    ),
    (
        "unused_results_and_args",
        dedent("""
        func.func @unused(%a: i32, %b: i32, %c: f32) {
          %0 = arith.addi %a, %b : i32
          %1 = arith.mulf %c, %c : f32
          %cst = arith.constant 3.0 : f32
          return
        }
    """),
    ),
    (
        "index_arithmetic",
        dedent("""
        func.func @index(%i: index, %j: index) -> (index, index, i1, i64) {
          %c4 = arith.constant 4 : index
          %0 = arith.muli %i, %c4 : index
          %1 = arith.addi %0, %j : index
          %2 = arith.remui %1, %c4 : index
          %3 = arith.cmpi ult, %2, %j : index
          %4 = arith.index_cast %2 : index to i64
          return %1, %2, %3, %4 : index, index, i1, i64
        }
    """),
    ),
    (
        "call_results_chain",
        dedent("""
        func.func private @rand() -> f32
        func.func @chain() -> f32 {
          %0 = call @rand() : () -> f32
          %1 = call @rand() : () -> f32
          %2 = arith.addf %0, %1 : f32
          %3 = call @square(%2) : (f32) -> f32
          return %3 : f32
        }
        func.func @square(%x: f32) -> f32 {
          %0 = arith.mulf %x, %x : f32
          return %0 : f32
        }
    """),
    ),
    (
        "dense_constants_shapes",
        dedent("""
        func.func @dense() -> (tensor<2x2xi32>, tensor<f32>, tensor<0xf32>, vector<2xf64>, tensor<3xi8>) {
          %0 = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
          %1 = arith.constant dense<0.5> : tensor<f32>
          %2 = arith.constant dense<> : tensor<0xf32>
          %3 = arith.constant dense<[0.1, 0.2]> : vector<2xf64>
          %4 = arith.constant dense<-1> : tensor<3xi8>
          return %0, %1, %2, %3, %4 : tensor<2x2xi32>, tensor<f32>, tensor<0xf32>, vector<2xf64>, tensor<3xi8>
        }
    """),
    ),
    (
        "special_float_constants",
        dedent("""
        func.func @special() -> (f32, f32, f32, f64, f16, f64, f32) {
          %0 = arith.constant 0x7F800000 : f32
          %1 = arith.constant 0xFF800000 : f32
          %2 = arith.constant 0x7FC00000 : f32
          %3 = arith.constant 3.14159265358979 : f64
          %4 = arith.constant 6.0e-8 : f16
          %5 = arith.constant 123456789.0 : f64
          %6 = arith.constant 1.0e-10 : f32
          return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f64, f16, f64, f32
        }
    """),
    ),
    (
        "generic_input_func_arith",
        dedent("""
        "func.func"() <{function_type = (i32) -> i32, sym_name = "g"}> ({
        ^bb0(%arg0: i32):
          %0 = "arith.addi"(%arg0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
          "func.return"(%0) : (i32) -> ()
        }) : () -> ()
    """),
    ),
]


def pretty_files(text: str) -> dict[str, str]:
    with new_context(registered=True):
        module = ir.Module.parse(text)
        pretty = module.operation.get_asm()
        generic_text = generic(module)
    with new_context(registered=True):
        reparsed = ir.Module.parse(pretty)
        if reparsed.operation.get_asm() != pretty:
            raise ValueError("pretty print does not re-parse to identical text")
        if generic(reparsed) != generic_text:
            raise ValueError("pretty print re-parses to different generic text")
    parse_and_print(generic_text, registered=True)
    plain_fixed_point(generic_text)
    return {".mlir": pretty, ".generic.mlir": generic_text}


def generate_pretty(writer: Writer) -> None:
    for name, text in PRETTY_SNIPPETS:
        attempt("pretty", name, lambda t=text: pretty_files(t), writer)


# ----------------------------------------------------------------------------------------------------------
# 4. canonicalize / cse expectations
# ----------------------------------------------------------------------------------------------------------

PIPELINES = {
    "": "builtin.module(canonicalize,cse)",
    ".canonicalize": "builtin.module(canonicalize)",
    ".cse": "builtin.module(cse)",
}


def constant_fold_function(name: str, op: str, type_: str, pairs: list[tuple[str, str]]) -> str:
    """``@name`` returns ``op(a, b)`` for every constant pair (a, b) of ``pairs``."""
    lines = []
    for index, (lhs, rhs) in enumerate(pairs):
        lines.append(f"  %a{index} = arith.constant {lhs} : {type_}\n")
        lines.append(f"  %b{index} = arith.constant {rhs} : {type_}\n")
        lines.append(f"  %r{index} = arith.{op} %a{index}, %b{index} : {type_}\n")
    results = ", ".join(f"%r{index}" for index in range(len(pairs)))
    result_type = "i1" if op.startswith("cmp") else type_
    types = ", ".join([result_type] * len(pairs))
    return f"func.func @{name}() -> ({types}) {{\n{''.join(lines)}  return {results} : {types}\n}}\n"


def cmp_fold_function(name: str, kind: str, type_: str, predicates: list[str], lhs: str, rhs: str) -> str:
    lines = [f"  %a = arith.constant {lhs} : {type_}\n", f"  %b = arith.constant {rhs} : {type_}\n"]
    for index, predicate in enumerate(predicates):
        lines.append(f"  %r{index} = arith.{kind} {predicate}, %a, %b : {type_}\n")
    results = ", ".join(f"%r{index}" for index in range(len(predicates)))
    types = ", ".join(["i1"] * len(predicates))
    return f"func.func @{name}() -> ({types}) {{\n{''.join(lines)}  return {results} : {types}\n}}\n"


INT_FOLD_PAIRS = [("7", "3"), ("-7", "2"), ("2147483647", "1"), ("-2147483648", "-1"), ("5", "0"), ("0", "0")]
FLOAT_FOLD_PAIRS = [
    ("1.5", "2.25"),
    ("1.0", "0.0"),
    ("0.0", "0.0"),
    ("-1.0", "0.0"),
    ("0.1", "0.2"),
    ("0x7FC00000", "1.0"),
    ("3.0e38", "3.0e38"),
]

# (name, input, also write the cse-only and canonicalize-only expectations)
CANONICALIZE_CASES: list[tuple[str, str, bool]] = [
    (
        f"fold_{op}_i32",
        constant_fold_function(f"fold_{op}", op, "i32", INT_FOLD_PAIRS),
        op in ("addi", "divsi"),
    )
    for op in [
        "addi",
        "subi",
        "muli",
        "divsi",
        "divui",
        "remsi",
        "remui",
        "andi",
        "ori",
        "xori",
        "maxsi",
        "minsi",
        "maxui",
        "minui",
        "ceildivsi",
        "floordivsi",
        "ceildivui",
    ]
]
CANONICALIZE_CASES += [
    (
        "fold_shifts_i8",
        "".join(
            constant_fold_function(
                f"fold_{op}", op, "i8", [("1", "3"), ("-128", "1"), ("-1", "7"), ("5", "8"), ("5", "-1")]
            )
            for op in ("shli", "shrsi", "shrui")
        ),
        False,
    ),
    (
        "fold_wrap_i8_i64",
        constant_fold_function("wrap_i8", "addi", "i8", [("127", "1"), ("255", "1"), ("-128", "-1")])
        + constant_fold_function(
            "wrap_i64", "muli", "i64", [("9223372036854775807", "2"), ("4294967296", "4294967296")]
        ),
        False,
    ),
]
CANONICALIZE_CASES += [
    (f"fold_{op}_f32", constant_fold_function(f"fold_{op}", op, "f32", FLOAT_FOLD_PAIRS), op == "divf")
    for op in ["addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf"]
]
CANONICALIZE_CASES += [
    (
        "fold_float_f64_f16",
        constant_fold_function("fold_f64", "addf", "f64", [("0.1", "0.2"), ("1.0e308", "1.0e308")])
        + constant_fold_function("fold_f16", "mulf", "f16", [("0.1", "3.0"), ("65504.0", "2.0")])
        + constant_fold_function("fold_bf16", "subf", "bf16", [("1.0", "0.00390625")]),
        False,
    ),
    (
        "fold_cmpi_all_predicates",
        cmp_fold_function("cmpi_lt", "cmpi", "i32", CMPI_PREDICATES, "-1", "1")
        + cmp_fold_function("cmpi_eq", "cmpi", "i32", CMPI_PREDICATES, "5", "5"),
        False,
    ),
    (
        "fold_cmpf_all_predicates",
        cmp_fold_function("cmpf_lt", "cmpf", "f32", CMPF_PREDICATES, "1.0", "2.0")
        + cmp_fold_function("cmpf_nan", "cmpf", "f32", CMPF_PREDICATES, "0x7FC00000", "2.0"),
        False,
    ),
    (
        "fold_negf",
        dedent("""
        func.func @negf() -> (f32, f64, f32, f32) {
          %a = arith.constant 1.5 : f32
          %b = arith.constant -0.0 : f64
          %c = arith.constant 0x7F800000 : f32
          %0 = arith.negf %a : f32
          %1 = arith.negf %b : f64
          %2 = arith.negf %c : f32
          %3 = arith.negf %0 : f32
          return %0, %1, %2, %3 : f32, f64, f32, f32
        }
    """),
        False,
    ),
    (
        "integer_identities",
        dedent("""
        func.func @identities(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %cm1 = arith.constant -1 : i32
          %0 = arith.addi %x, %c0 : i32
          %1 = arith.addi %c0, %x : i32
          %2 = arith.muli %x, %c1 : i32
          %3 = arith.muli %x, %c0 : i32
          %4 = arith.subi %x, %c0 : i32
          %5 = arith.subi %x, %x : i32
          %6 = arith.xori %x, %x : i32
          %7 = arith.andi %x, %x : i32
          %8 = arith.ori %x, %x : i32
          %9 = arith.andi %x, %c0 : i32
          %10 = arith.ori %x, %c0 : i32
          %11 = arith.andi %x, %cm1 : i32
          %12 = arith.ori %x, %cm1 : i32
          %13 = arith.divsi %x, %c1 : i32
          %14 = arith.remsi %x, %c1 : i32
          %15 = arith.shli %x, %c0 : i32
          return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
        }
    """),
        True,
    ),
    (
        "float_identities",
        dedent("""
        func.func @fidentities(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32) {
          %zero = arith.constant 0.0 : f32
          %negzero = arith.constant -0.0 : f32
          %one = arith.constant 1.0 : f32
          %0 = arith.addf %x, %negzero : f32
          %1 = arith.addf %x, %zero : f32
          %2 = arith.subf %x, %zero : f32
          %3 = arith.mulf %x, %one : f32
          %4 = arith.mulf %x, %zero : f32
          %5 = arith.divf %x, %one : f32
          %6 = arith.negf %x : f32
          %7 = arith.negf %6 : f32
          %8 = arith.subf %x, %x : f32
          %9 = arith.maximumf %x, %x : f32
          return %0, %1, %2, %3, %4, %5, %7, %8, %9 : f32, f32, f32, f32, f32, f32, f32, f32, f32
        }
    """),
        False,
    ),
    (
        "float_identities_fastmath",
        dedent("""
        func.func @fast(%x: f32) -> (f32, f32) {
          %zero = arith.constant 0.0 : f32
          %0 = arith.mulf %x, %zero fastmath<nnan, nsz> : f32
          %1 = arith.subf %x, %x fastmath<fast> : f32
          return %0, %1 : f32, f32
        }
    """),
        False,
    ),
    (
        "bool_identities",
        dedent("""
        func.func @bools(%a: i1, %b: i1) -> (i1, i1, i1, i1, i1, i1) {
          %true = arith.constant true
          %false = arith.constant false
          %0 = arith.andi %a, %true : i1
          %1 = arith.ori %a, %false : i1
          %2 = arith.xori %a, %true : i1
          %3 = arith.xori %2, %true : i1
          %4 = arith.andi %a, %false : i1
          %5 = arith.ori %b, %true : i1
          return %0, %1, %2, %3, %4, %5 : i1, i1, i1, i1, i1, i1
        }
    """),
        False,
    ),
    (
        "cmpi_same_operand",
        dedent("""
        func.func @same(%x: i32) -> (i1, i1, i1, i1, i1, i1) {
          %0 = arith.cmpi eq, %x, %x : i32
          %1 = arith.cmpi ne, %x, %x : i32
          %2 = arith.cmpi slt, %x, %x : i32
          %3 = arith.cmpi sle, %x, %x : i32
          %4 = arith.cmpi ugt, %x, %x : i32
          %5 = arith.cmpi uge, %x, %x : i32
          return %0, %1, %2, %3, %4, %5 : i1, i1, i1, i1, i1, i1
        }
    """),
        False,
    ),
    (
        "cmpi_constant_on_left",
        dedent("""
        func.func @swap(%x: i32) -> (i1, i1, i1) {
          %c5 = arith.constant 5 : i32
          %0 = arith.cmpi slt, %c5, %x : i32
          %1 = arith.cmpi eq, %c5, %x : i32
          %2 = arith.cmpi uge, %c5, %x : i32
          return %0, %1, %2 : i1, i1, i1
        }
    """),
        False,
    ),
    (
        "commutative_constant_to_right",
        dedent("""
        func.func @commute(%x: i32, %y: f32) -> (i32, i32, f32, i32) {
          %c3 = arith.constant 3 : i32
          %cst = arith.constant 2.0 : f32
          %0 = arith.addi %c3, %x : i32
          %1 = arith.muli %c3, %x : i32
          %2 = arith.mulf %cst, %y : f32
          %3 = arith.andi %c3, %x : i32
          return %0, %1, %2, %3 : i32, i32, f32, i32
        }
    """),
        True,
    ),
    (
        "add_constant_chains",
        dedent("""
        func.func @chains(%x: i32) -> (i32, i32, i32, i32) {
          %c1 = arith.constant 1 : i32
          %c2 = arith.constant 2 : i32
          %0 = arith.addi %x, %c1 : i32
          %1 = arith.addi %0, %c2 : i32
          %2 = arith.subi %1, %c1 : i32
          %3 = arith.subi %c2, %x : i32
          %4 = arith.subi %3, %c1 : i32
          %5 = arith.muli %x, %c2 : i32
          %6 = arith.muli %5, %c2 : i32
          return %1, %2, %4, %6 : i32, i32, i32, i32
        }
    """),
        False,
    ),
    (
        "select_constant_condition",
        dedent("""
        func.func @select(%x: i32, %y: i32, %c: i1) -> (i32, i32, i32, i1, i1, i1) {
          %true = arith.constant true
          %false = arith.constant false
          %0 = arith.select %true, %x, %y : i32
          %1 = arith.select %false, %x, %y : i32
          %2 = arith.select %c, %x, %x : i32
          %3 = arith.select %c, %true, %false : i1
          %4 = arith.select %c, %false, %true : i1
          %5 = arith.select %c, %c, %false : i1
          return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i1, i1, i1
        }
    """),
        True,
    ),
    (
        "select_of_cmp",
        dedent("""
        func.func @select_cmp(%x: i32, %y: i32) -> (i32, i32) {
          %0 = arith.cmpi eq, %x, %y : i32
          %1 = arith.select %0, %x, %y : i32
          %2 = arith.cmpi ne, %x, %y : i32
          %3 = arith.select %2, %x, %y : i32
          return %1, %3 : i32, i32
        }
    """),
        False,
    ),
    (
        "fold_integer_casts",
        dedent("""
        func.func @int_casts() -> (i32, i32, i8, index, i64, i32, i1, i16) {
          %c = arith.constant -1 : i8
          %big = arith.constant 300 : i32
          %idx = arith.constant 42 : index
          %0 = arith.extsi %c : i8 to i32
          %1 = arith.extui %c : i8 to i32
          %2 = arith.trunci %big : i32 to i8
          %3 = arith.index_cast %big : i32 to index
          %4 = arith.index_cast %idx : index to i64
          %5 = arith.index_castui %idx : index to i32
          %6 = arith.trunci %big : i32 to i1
          %7 = arith.extsi %6 : i1 to i16
          return %0, %1, %2, %3, %4, %5, %6, %7 : i32, i32, i8, index, i64, i32, i1, i16
        }
    """),
        False,
    ),
    (
        "fold_float_casts",
        dedent("""
        func.func @float_casts() -> (f32, f64, i32, i32, f32, f16, i32, f32, f64, i8) {
          %i = arith.constant -7 : i32
          %f = arith.constant 2.75 : f32
          %d = arith.constant 0.1 : f64
          %neg = arith.constant -2.5 : f32
          %0 = arith.sitofp %i : i32 to f32
          %1 = arith.uitofp %i : i32 to f64
          %2 = arith.fptosi %f : f32 to i32
          %3 = arith.fptoui %f : f32 to i32
          %4 = arith.truncf %d : f64 to f32
          %5 = arith.truncf %d : f64 to f16
          %6 = arith.bitcast %f : f32 to i32
          %7 = arith.bitcast %6 : i32 to f32
          %8 = arith.extf %f : f32 to f64
          %9 = arith.fptoui %neg : f32 to i8
          return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : f32, f64, i32, i32, f32, f16, i32, f32, f64, i8
        }
    """),
        False,
    ),
    (
        "cast_chains",
        dedent("""
        func.func @cast_chains(%a: i8, %b: i32, %c: f32) -> (i64, i8, i32, i32, f32, i64) {
          %0 = arith.extsi %a : i8 to i32
          %1 = arith.extsi %0 : i32 to i64
          %2 = arith.trunci %0 : i32 to i8
          %3 = arith.index_cast %b : i32 to index
          %4 = arith.index_cast %3 : index to i32
          %5 = arith.bitcast %c : f32 to i32
          %6 = arith.bitcast %5 : i32 to f32
          %7 = arith.extui %a : i8 to i32
          %8 = arith.extui %7 : i32 to i64
          return %1, %2, %4, %5, %6, %8 : i64, i8, i32, i32, f32, i64
        }
    """),
        False,
    ),
    (
        "cse_duplicate_expressions",
        dedent("""
        func.func @dups(%x: i32, %y: i32) -> (i32, i32, i32, i32, i1, i1) {
          %0 = arith.addi %x, %y : i32
          %1 = arith.addi %x, %y : i32
          %2 = arith.muli %0, %1 : i32
          %3 = arith.muli %1, %0 : i32
          %4 = arith.cmpi slt, %x, %y : i32
          %5 = arith.cmpi slt, %x, %y : i32
          return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, i1, i1
        }
    """),
        True,
    ),
    (
        "cse_commutative_swapped",
        dedent("""
        func.func @swapped(%x: i32, %y: i32) -> (i32, i32, f32, f32) {
          %0 = arith.addi %x, %y : i32
          %1 = arith.addi %y, %x : i32
          %a = arith.sitofp %x : i32 to f32
          %b = arith.sitofp %y : i32 to f32
          %2 = arith.mulf %a, %b : f32
          %3 = arith.mulf %b, %a : f32
          return %0, %1, %2, %3 : i32, i32, f32, f32
        }
    """),
        True,
    ),
    (
        "cse_different_attributes_kept",
        dedent("""
        func.func @attrs(%x: f32, %y: f32, %a: i32, %b: i32) -> (f32, f32, i32, i32, i1, i1) {
          %0 = arith.addf %x, %y : f32
          %1 = arith.addf %x, %y fastmath<fast> : f32
          %2 = arith.addi %a, %b : i32
          %3 = arith.addi %a, %b overflow<nsw> : i32
          %4 = arith.cmpi slt, %a, %b : i32
          %5 = arith.cmpi sle, %a, %b : i32
          return %0, %1, %2, %3, %4, %5 : f32, f32, i32, i32, i1, i1
        }
    """),
        True,
    ),
    (
        "duplicate_constants_hoisted",
        dedent("""
        func.func @constants(%x: i32) -> (i32, i32, i32, f32, f32) {
          %0 = arith.addi %x, %x : i32
          %c7 = arith.constant 7 : i32
          %1 = arith.muli %0, %c7 : i32
          %c7_again = arith.constant 7 : i32
          %2 = arith.subi %1, %c7_again : i32
          %f = arith.constant 1.5 : f32
          %g = arith.constant 1.5 : f32
          return %0, %1, %2, %f, %g : i32, i32, i32, f32, f32
        }
    """),
        True,
    ),
    (
        "dead_pure_ops_removed",
        dedent("""
        func.func @dead(%x: i32, %y: f32) -> i32 {
          %c1 = arith.constant 1 : i32
          %0 = arith.addi %x, %c1 : i32
          %1 = arith.muli %0, %0 : i32
          %2 = arith.mulf %y, %y : f32
          %3 = arith.cmpi slt, %1, %x : i32
          %4 = arith.select %3, %x, %0 : i32
          %cst = arith.constant 3.0 : f32
          return %x : i32
        }
    """),
        True,
    ),
    (
        "side_effects_kept",
        dedent("""
        func.func private @effect(i32) -> i32
        func.func @effects(%x: i32) -> i32 {
          %0 = call @effect(%x) : (i32) -> i32
          %1 = call @effect(%x) : (i32) -> i32
          %2 = "test.unknown"(%x) : (i32) -> i32
          %3 = "test.unknown"(%x) : (i32) -> i32
          "test.sink"() : () -> ()
          %4 = arith.addi %x, %x : i32
          %5 = arith.addi %x, %x : i32
          return %5 : i32
        }
    """),
        True,
    ),
    (
        "unregistered_ops_with_regions",
        dedent("""
        func.func @regions(%x: i32) -> i32 {
          %c0 = arith.constant 0 : i32
          %0 = arith.addi %x, %c0 : i32
          %1 = arith.muli %0, %x : i32
          %2 = "test.region"(%1) ({
          ^bb0(%arg: i32):
            %c0_inner = arith.constant 0 : i32
            %3 = arith.addi %arg, %c0_inner : i32
            %4 = arith.muli %0, %x : i32
            %5 = arith.muli %x, %x : i32
            "test.yield"(%3, %4, %5) : (i32, i32, i32) -> ()
          }) : (i32) -> i32
          return %2 : i32
        }
    """),
        True,
    ),
    (
        "dense_folding",
        dedent("""
        func.func @dense() -> (tensor<4xi32>, vector<2xf32>, tensor<4xi1>, tensor<3xf64>) {
          %a = arith.constant dense<3> : tensor<4xi32>
          %b = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
          %c = arith.constant dense<1.5> : vector<2xf32>
          %d = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
          %0 = arith.addi %a, %b : tensor<4xi32>
          %1 = arith.mulf %c, %c : vector<2xf32>
          %2 = arith.cmpi slt, %a, %b : tensor<4xi32>
          %3 = arith.addf %d, %d : tensor<3xf64>
          return %0, %1, %2, %3 : tensor<4xi32>, vector<2xf32>, tensor<4xi1>, tensor<3xf64>
        }
    """),
        False,
    ),
    (
        "index_folding",
        dedent("""
        func.func @index(%i: index) -> (index, index, index, i1) {
          %c4 = arith.constant 4 : index
          %c8 = arith.constant 8 : index
          %0 = arith.muli %c4, %c8 : index
          %1 = arith.divui %c8, %c4 : index
          %2 = arith.addi %i, %0 : index
          %3 = arith.cmpi ult, %c4, %c8 : index
          return %0, %1, %2, %3 : index, index, index, i1
        }
    """),
        False,
    ),
    (
        "several_functions",
        dedent("""
        func.func @a(%x: i32) -> i32 {
          %c0 = arith.constant 0 : i32
          %0 = arith.addi %x, %c0 : i32
          return %0 : i32
        }
        func.func @b(%x: i32) -> i32 {
          %0 = arith.muli %x, %x : i32
          %1 = arith.muli %x, %x : i32
          %2 = arith.addi %0, %1 : i32
          return %2 : i32
        }
        func.func private @unused_private() -> i32 {
          %c1 = arith.constant 1 : i32
          %c2 = arith.constant 2 : i32
          %0 = arith.addi %c1, %c2 : i32
          return %0 : i32
        }
    """),
        True,
    ),
    (
        "nothing_to_do",
        dedent("""
        func.func @nothing(%x: i32, %y: i32) -> i32 {
          %0 = arith.addi %x, %y : i32
          %1 = arith.muli %0, %y : i32
          return %1 : i32
        }
    """),
        True,
    ),
    (
        "return_of_folded_constant",
        dedent("""
        func.func @folded() -> (i32, f32, i1) {
          %c2 = arith.constant 2 : i32
          %c3 = arith.constant 3 : i32
          %0 = arith.muli %c2, %c3 : i32
          %1 = arith.addi %0, %0 : i32
          %f = arith.sitofp %1 : i32 to f32
          %2 = arith.cmpi sgt, %1, %c3 : i32
          return %1, %f, %2 : i32, f32, i1
        }
    """),
        True,
    ),
    (
        "div_rem_by_zero_not_folded",
        dedent("""
        func.func @divzero(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32) {
          %c0 = arith.constant 0 : i32
          %cmin = arith.constant -2147483648 : i32
          %cm1 = arith.constant -1 : i32
          %0 = arith.divsi %x, %c0 : i32
          %1 = arith.divui %x, %c0 : i32
          %2 = arith.remsi %x, %c0 : i32
          %3 = arith.remui %x, %c0 : i32
          %4 = arith.divsi %cmin, %cm1 : i32
          %5 = arith.ceildivsi %x, %c0 : i32
          %6 = arith.floordivsi %cmin, %cm1 : i32
          return %0, %1, %2, %3, %4, %5, %6 : i32, i32, i32, i32, i32, i32, i32
        }
    """),
        False,
    ),
    (
        "division_by_one_and_self",
        dedent("""
        func.func @divs(%x: i32) -> (i32, i32, i32, i32, i32) {
          %c1 = arith.constant 1 : i32
          %0 = arith.divui %x, %c1 : i32
          %1 = arith.remui %x, %c1 : i32
          %2 = arith.divsi %x, %x : i32
          %3 = arith.ceildivui %x, %c1 : i32
          %4 = arith.floordivsi %x, %c1 : i32
          return %0, %1, %2, %3, %4 : i32, i32, i32, i32, i32
        }
    """),
        False,
    ),
    (
        "min_max_same_operand",
        dedent("""
        func.func @minmax(%x: i32, %f: f32) -> (i32, i32, i32, i32, f32, f32) {
          %0 = arith.maxsi %x, %x : i32
          %1 = arith.minsi %x, %x : i32
          %2 = arith.maxui %x, %x : i32
          %3 = arith.minui %x, %x : i32
          %4 = arith.maximumf %f, %f : f32
          %5 = arith.minnumf %f, %f : f32
          return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, f32, f32
        }
    """),
        False,
    ),
    (
        "xor_of_cmpi_negates",
        dedent("""
        func.func @negate(%x: i32, %y: i32) -> (i1, i1) {
          %true = arith.constant true
          %0 = arith.cmpi slt, %x, %y : i32
          %1 = arith.xori %0, %true : i1
          %2 = arith.cmpi eq, %x, %y : i32
          %3 = arith.xori %true, %2 : i1
          return %1, %3 : i1, i1
        }
    """),
        False,
    ),
    (
        "unregistered_uses_folded_values",
        dedent("""
        func.func @feed() {
          %c2 = arith.constant 2 : i32
          %c5 = arith.constant 5 : i32
          %0 = arith.muli %c2, %c5 : i32
          "test.use"(%0, %c2) : (i32, i32) -> ()
          %1 = arith.addi %0, %c2 : i32
          "test.use"(%1) : (i32) -> ()
          return
        }
    """),
        True,
    ),
]


def pass_output(text: str, pipeline: str) -> str:
    with new_context(registered=True):
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(pipeline).run(module.operation)
        printed = generic(module)
    parse_and_print(printed, registered=True)
    return plain_fixed_point(printed)


def canonicalize_files(text: str, extra: bool) -> dict[str, str]:
    files = {".input.mlir": text}
    for suffix, pipeline in PIPELINES.items():
        if suffix and not extra:
            continue
        files[f"{suffix}.expected.mlir"] = pass_output(text, pipeline)
    return files


def generate_canonicalize(writer: Writer) -> None:
    for name, text, extra in CANONICALIZE_CASES:
        attempt("canonicalize", name, lambda t=text, e=extra: canonicalize_files(t, e), writer)


def generate_generic(writer: Writer) -> None:
    generate_jax(writer)
    generate_snippets(writer)


ORACLE_VERSION = "0.10.2"


def main() -> None:
    import jaxlib

    if jaxlib.__version__ != ORACLE_VERSION:
        print(
            f"warning: the corpus was made with jaxlib {ORACLE_VERSION}; this is jaxlib {jaxlib.__version__}"
        )
    sections: list[tuple[str, Callable[[Writer], None]]] = [
        ("generic", generate_generic),
        ("debuginfo", generate_debuginfo),
        ("pretty", generate_pretty),
        ("canonicalize", generate_canonicalize),
    ]
    for folder, generate in sections:
        writer = Writer(folder)
        generate(writer)
        print(f"{folder}: {writer.count} entries")
    print(f"dropped: {len(DROPPED)}")
    for line in DROPPED:
        print("  ", line)


if __name__ == "__main__":
    main()
