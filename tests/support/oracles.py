"""Oracles more than one suite checks against: XLA's CPU backend on StableHLO text, and float64
central finite differences of a loom program."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
