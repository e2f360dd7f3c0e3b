"""CHLO ops JAX has no jax.lax function for, against XLA's own decomposition of them (the op's
StableHLO text compiled by XLA): `chlo.mulhi` on every integer type, `chlo._asin_acos_kernel` on
complex numbers, on the numpy and torch backends and the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
from support.op_info import MLIR_TYPES, random_array  # noqa: E402
from support.oracles import assert_matches, run_xla  # noqa: E402

import loom  # noqa: E402

EXECUTORS = (("compiled", "numpy"), ("interpreter", "numpy"), ("compiled", "torch"))


def _program(op: str, args: tuple) -> str:
    t = f"tensor<{len(args[0])}x{MLIR_TYPES[args[0].dtype]}>"
    params = ", ".join(f"%a{i}: {t}" for i in range(len(args)))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    return f"""func.func @main({params}) -> {t} {{
  %0 = "{op}"({operands}) : ({", ".join([t] * len(args))}) -> {t}
  return %0 : {t}
}}"""


def _check(op: str, args: tuple, tol: float | None = None) -> None:
    text = _program(op, args)
    want = run_xla(text, list(args))[0]
    for executor, backend in EXECUTORS:
        got = loom.execute(text, *args, executor=executor, backend=backend)
        if backend == "torch":
            got = loom.backend.torch_kernels.to_numpy(got)
        assert_matches(got, want, tol, f"{op} ({args[0].dtype}) on the {executor} executor ({backend})")


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_mulhi_matches_xla(dtype):
    dt = np.dtype(dtype)
    rs = np.random.RandomState(dt.itemsize)
    info = np.iinfo(dt)
    edges = np.array([info.min, info.max, info.max, 0, 1, info.min], dt)
    a = np.concatenate([random_array(rs, (10,), dt, "full"), edges])
    b = np.concatenate([random_array(rs, (10,), dt, "full"), edges[::-1]])
    _check("chlo.mulhi", (a, b))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_asin_acos_kernel_matches_xla(dtype):
    rs = np.random.RandomState(3)
    z = (rs.randn(12) * 3 + 1j * rs.randn(12) * 3).astype(dtype)
    # the real axis inside and outside [-1, 1] (the branch cuts), the imaginary axis, small values
    edges = np.array([0.5, -0.5, 2.0, -2.0, 1.0, -1.0, 3j, -3j, 1e-3 + 1e-3j, -2 + 3j, 10 - 0.5j, 0], dtype)
    _check("chlo._asin_acos_kernel", (np.concatenate([z, edges]),), 1e-5 if dtype == np.complex64 else 1e-12)
