"""The calls the eager / jit / JAX parity test makes (tests/numpy/test_eager_jit_parity.py), written
against a NumPy-like namespace `xnp` so that the same case runs on loom.numpy and on jax.numpy.
Arrays are arguments (traced under jit); axes, dtypes and Python scalars are part of the call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

I32 = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
I64 = np.arange(6, dtype=np.int64).reshape(2, 3)
U8 = np.arange(6, dtype=np.uint8).reshape(2, 3)
I8 = (np.arange(6, dtype=np.int8) - 3).reshape(2, 3)
F32 = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5) / 2
F64 = np.linspace(-1, 1, 6).reshape(2, 3)
B = np.array([[True, False, True], [False, True, True]])
V3 = np.array([1.0, 2.0, 3.0], np.float32)
V4 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
IDX = np.array([2, 0, 1], np.int32)
IDX2 = np.array([[2, 0], [1, 1]], np.int32)
FIDX = np.array([0.0, 1.0], np.float32)


@dataclass(frozen=True)
class Case:
    """`fn(xnp, *args)`; `error` is the message fragment naming the bad argument when the call must
    raise (checked on eager calls too unless `eager_numpy`: the eager call is NumPy's own, on numpy
    arrays, in JAX and in loom alike)."""

    name: str
    fn: Callable[..., Any]
    args: tuple = ()
    error: str | None = None
    eager_numpy: bool = False


def _c(name: str, fn: Callable[..., Any], *args: Any, error: str | None = None, eager_numpy: bool = False) -> Case:
    return Case(name, fn, args, error, eager_numpy)


CASES: list[Case] = [
    # reductions, with and without dtype=
    *[_c(f"{r}_{n}", lambda x, a, r=r: getattr(x, r)(a), a)
      for r in ("sum", "prod", "max", "min", "any", "all")
      for n, a in (("i32", I32), ("u8", U8), ("i8", I8), ("bool", B), ("f32", F32), ("f64", F64), ("i64", I64))],
    _c("sum_axis0_i32", lambda x, a: x.sum(a, axis=0), I32),
    _c("sum_axis1_keepdims_bool", lambda x, a: x.sum(a, axis=1, keepdims=True), B),
    _c("sum_dtype_f32", lambda x, a: x.sum(a, dtype=np.float32), I32),
    _c("sum_dtype_i64", lambda x, a: x.sum(a, dtype=np.int64), I32),
    _c("sum_dtype_f64", lambda x, a: x.sum(a, dtype=np.float64), F32),
    _c("sum_dtype_i8", lambda x, a: x.sum(a, dtype=np.int8), I32),
    _c("prod_dtype_f32", lambda x, a: x.prod(a, dtype=np.float32), U8),
    *[_c(f"{r}_{n}", lambda x, a, r=r: getattr(x, r)(a), a)
      for r in ("mean", "var", "std")
      for n, a in (("i32", I32), ("u8", U8), ("bool", B), ("f32", F32), ("i64", I64), ("f64", F64))],
    _c("mean_axis1_i32", lambda x, a: x.mean(a, axis=1), I32),
    _c("mean_dtype_f64", lambda x, a: x.mean(a, dtype=np.float64), I32),
    _c("var_ddof1_i32", lambda x, a: x.var(a, ddof=1), I32),
    _c("std_axis0_f32", lambda x, a: x.std(a, axis=0), F32),
    *[_c(f"{r}_{n}", lambda x, a, r=r: getattr(x, r)(a, axis=1), a)
      for r in ("cumsum", "cumprod")
      for n, a in (("i32", I32), ("u8", U8), ("i8", I8), ("bool", B), ("f32", F32), ("i64", I64))],
    _c("cumsum_flat_i32", lambda x, a: x.cumsum(a), I32),
    _c("cumsum_dtype_f32", lambda x, a: x.cumsum(a, axis=0, dtype=np.float32), I32),
    # creation
    _c("arange_int", lambda x: x.arange(5)),
    _c("arange_float", lambda x: x.arange(5.0)),
    _c("arange_step", lambda x: x.arange(0, 1, 0.25)),
    _c("arange_dtype", lambda x: x.arange(2, 8, 2, dtype=np.float32)),
    _c("linspace", lambda x: x.linspace(0, 1, 5)),
    _c("linspace_int_dtype", lambda x: x.linspace(0, 10, 5, dtype=np.int32)),
    _c("linspace_noendpoint", lambda x: x.linspace(0.0, 2.0, 4, endpoint=False)),
    # where, clip, round
    _c("where_i32_f32", lambda x, c, a, b: x.where(c, a, b), B, I32, F32),
    _c("where_i32_pyfloat", lambda x, c, a: x.where(c, a, 1.5), B, I32),
    _c("where_pyints", lambda x, c: x.where(c, 1, 2), B),
    _c("where_u8_i8", lambda x, c, a, b: x.where(c, a, b), B, U8, I8),
    _c("clip_i32_ints", lambda x, a: x.clip(a, -1, 2), I32),
    _c("clip_f32", lambda x, a: x.clip(a, -0.5, 0.75), F32),
    _c("clip_i32_floats", lambda x, a: x.clip(a, -0.5, 1.5), I32),
    _c("clip_u8_array", lambda x, a, lo: x.clip(a, lo, 4), U8, I8),
    _c("round_f32", lambda x, a: x.round(a), F32),
    _c("round_f32_1", lambda x, a: x.round(a * 3.3, 1), F32),
    _c("round_i32", lambda x, a: x.round(a), I32),
    _c("round_i32_neg", lambda x, a: x.round(a * 37, -1), I32),
    _c("round_bool", lambda x, a: x.round(a), B),
    # division, power and remainder on mixed int / float / bool and Python scalars
    *[_c(f"{f}_{na}_{nb}", lambda x, a, b, f=f: getattr(x, f)(a, b), a, b)
      for f in ("divide", "true_divide", "floor_divide", "power", "mod", "remainder", "add", "multiply", "subtract")
      for na, a, nb, b in (("i32", I32, "i32", I32 + 3), ("i32", I32, "f32", F32 + 3), ("u8", U8, "i8", I8 + 4),
                           ("bool", B, "i32", I32 + 3), ("f32", F32, "bool", B), ("i64", I64, "i32", I32 + 3),
                           ("f64", F64, "f32", F32 + 3), ("u8", U8, "bool", B))
      if not (f == "subtract" and "bool" in (na, nb))],
    *[_c(f"{f}_{na}_py{type(s).__name__}", lambda x, a, f=f, s=s: getattr(x, f)(a, s), a)
      for f in ("divide", "true_divide", "floor_divide", "power", "mod", "add", "multiply")
      for na, a in (("i32", I32), ("u8", U8), ("f32", F32), ("bool", B))
      for s in (3, 2.5)],
    _c("rdivide_pyint_i32", lambda x, a: x.divide(7, a + 3), I32),
    _c("rpower_pyfloat_i32", lambda x, a: x.power(2.0, a), I32),
    _c("floor_divide_pyint_bool", lambda x, a: x.floor_divide(5, a + 1), B),
    # joining mixed dtypes
    _c("concatenate_i32_f32", lambda x, a, b: x.concatenate([a, b]), I32, F32),
    _c("concatenate_bool_u8", lambda x, a, b: x.concatenate([a, b], axis=1), B, U8),
    _c("concatenate_u8_i8", lambda x, a, b: x.concatenate([a, b]), U8, I8),
    _c("concatenate_i64_i32", lambda x, a, b: x.concatenate([a, b]), I64, I32),
    _c("stack_i8_f32", lambda x, a, b: x.stack([a, b]), I8, F32),
    _c("stack_bool_i32", lambda x, a, b: x.stack([a, b], axis=1), B, I32),
    _c("stack_f64_f32", lambda x, a, b: x.stack([a, b], axis=-1), F64, F32),
    # indices
    _c("argmax_f32", lambda x, a: x.argmax(a), F32),
    _c("argmax_axis1_i32", lambda x, a: x.argmax(a, axis=1), I32),
    _c("argmin_axis0_bool", lambda x, a: x.argmin(a, axis=0), B),
    _c("argsort_f32", lambda x, a: x.argsort(a * -1), F32),
    _c("argsort_axis0_i32", lambda x, a: x.argsort(a * -1, axis=0), I32),
    # contractions
    _c("matmul_i32", lambda x, a, b: x.matmul(a, b.T), I32, I32),
    _c("matmul_f32_i32", lambda x, a, b: x.matmul(a, b.T), F32, I32),
    _c("matmul_bool", lambda x, a, b: x.matmul(a, b.T), B, B),
    _c("matmul_u8_i8", lambda x, a, b: x.matmul(a, b.T), U8, I8),
    _c("matmul_f64_f32", lambda x, a, b: x.matmul(a, b.T), F64, F32),
    _c("dot_i32_f32", lambda x, a, b: x.dot(a, b.T), I32, F32),
    _c("dot_vectors_i8", lambda x, a, b: x.dot(a[0], b[1]), I8, I8),
    _c("einsum_f32_i32", lambda x, a, b: x.einsum("ij,kj->ik", a, b), F32, I32),
    _c("einsum_i32", lambda x, a: x.einsum("ij->j", a), I32),
    _c("einsum_bool_u8", lambda x, a, b: x.einsum("ij,ij->i", a, b), B, U8),
    # gathers
    _c("take_f32", lambda x, a, i: x.take(a, i), F32, IDX),
    _c("take_axis1_i32", lambda x, a, i: x.take(a, i, axis=1), I32, IDX),
    _c("take_along_axis_f32", lambda x, a, i: x.take_along_axis(a, i, axis=1), F32, IDX2),
    _c("take_along_axis_bool", lambda x, a, i: x.take_along_axis(a, i, axis=1), B, IDX2),
    # conversions
    *[_c(f"astype_{n}_{np.dtype(d).name}", lambda x, a, d=d: x.astype(a, d), a)
      for n, a in (("i32", I32), ("f32", F32), ("bool", B), ("f64", F64))
      for d in (np.float64, np.int64, np.float32, np.bool_, np.uint8)],
    # bad inputs: the error's type as JAX's, its message naming what is wrong
    _c("error_add_shapes", lambda x, a, b: x.add(a, b), V3, V4, error="(3,)"),
    _c("error_matmul_shapes", lambda x, a, b: x.matmul(a, b), F32, F32, error="(2, 3)"),
    _c("error_concatenate_shapes", lambda x, a, b: x.concatenate([a, b], axis=0), V3, F32, error="concatenate"),
    _c("error_sum_axis", lambda x, a: x.sum(a, axis=2), F32, error="axis 2"),
    _c("error_argmax_axis", lambda x, a: x.argmax(a, axis=-3), F32, error="axis -3"),
    _c("error_concatenate_axis", lambda x, a: x.concatenate([a, a], axis=2), F32, error="axis 2"),
    _c("error_take_float_indices", lambda x, a, i: x.take(a, i), V3, FIDX, error="float32"),
    # JAX raises IndexError eagerly (NumPy's indexing of numpy arrays) and TypeError under jit
    _c("error_index_float_indices", lambda x, a, i: a[i], V3, FIDX, error="float32", eager_numpy=True),
    _c("error_add_one_argument", lambda x, a: x.add(a), V3, error="add"),
    _c("error_where_two_arguments", lambda x, c, a: x.where(c, a), B, F32, error="where"),
    _c("error_matmul_three_arguments", lambda x, a: x.matmul(a, a, a), F32, error="matmul"),
]


def run_case(xnp: Any, case: Case, jit: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None) -> Any:
    """The case's result (`jit` applied to the call over the array arguments when given), or the
    exception it raised."""
    def call(*args: Any) -> Any:
        return case.fn(xnp, *args)

    if jit is not None:
        call = jit(call)
    try:
        return call(*case.args)
    except Exception as e:  # noqa: BLE001 - the error is the result under test
        return e


def jax_results(x64: bool) -> dict[str, Any]:
    """JAX's result of every case: (dtype name, value as numpy) or ("error", type name, message)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", x64)
    out: dict[str, Any] = {}
    for case in CASES:
        for mode, jit in (("eager", None), ("jit", jax.jit)):
            r = run_case(jnp, case, jit)
            if isinstance(r, Exception):
                out[f"{case.name}/{mode}"] = ("error", type(r).__name__, str(r))
            else:
                out[f"{case.name}/{mode}"] = (str(r.dtype), np.asarray(r))
    return out


if __name__ == "__main__":  # `python parity_cases.py`: JAX's results with x64 off and on, pickled to stdout
    import pickle
    import sys
    import tempfile

    import jax

    with tempfile.TemporaryDirectory() as cache:
        # XLA compiles each program once: a case whose program is the same with x64 on as off (most
        # of the 32-bit ones) reads it back from this cache instead of compiling it again.
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        sys.stdout.buffer.write(pickle.dumps({x64: jax_results(x64) for x64 in (False, True)}))
