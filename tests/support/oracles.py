"""Oracles more than one suite checks against: XLA's CPU backend on StableHLO text, float64
central finite differences of a loom program, and the comparison of a result with an oracle's
(tolerance by dtype)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np

import loom


def run_xla(text: str, args: Sequence) -> list[np.ndarray]:
    """Compile StableHLO `text` on XLA's CPU backend (through jax) and run it on `args`."""
    import jax
    import jax.extend as jex
    from jaxlib import xla_client

    backend = jex.backend.get_backend("cpu")
    devs = backend.local_devices()[:1]
    exe = backend.compile_and_load(text, executable_devices=xla_client.DeviceList(tuple(devs)),
                                   compile_options=jex.backend.get_compile_options(num_replicas=1, num_partitions=1))
    with jax.enable_x64(True):
        return [np.asarray(o) for o in exe.execute([jax.device_put(a, devs[0]) for a in args])]


def finite_differences(f: Callable, args: Sequence, argnum: int, eps: float = 1e-6) -> np.ndarray:
    """Central differences of a float64 program (run with loom.jit) w.r.t. argument `argnum`."""
    jitted = loom.jit(f)
    x = np.array(args[argnum], np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        a = list(args)
        a[argnum] = hi
        fh = float(jitted(*a))
        a[argnum] = lo
        fl = float(jitted(*a))
        g[i] = (fh - fl) / (2 * eps)
    return g


def tolerance(dtype: np.dtype, override: float | None) -> float:
    if override is not None:
        return override
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return 2e-2
    if dtype == np.float16:
        return 4e-3
    if dtype in (np.dtype(np.float64), np.dtype(np.complex128)):
        return 1e-10
    return 2e-5


def assert_matches(actual, expected, tol: float | None, what: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "fcV":
        t = tolerance(actual.dtype, tol)
        wide = np.complex128 if actual.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide), rtol=t, atol=t, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
