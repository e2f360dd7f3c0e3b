"""Tracing and the transformations keep their state per thread: threads that trace, jit,
differentiate, batch and run control flow at the same time each get what one thread alone gets."""

from __future__ import annotations

import threading

import numpy as np

import loom
import loom.numpy as lnp
from loom import lax

THREADS, CALLS = 8, 24


def _work(i: int) -> list[np.ndarray]:
    """Fresh functions on every call, so every call traces (a first call of jit(grad(f)))."""
    scale = np.float32(1 + i / 8)

    def f(x):
        return lnp.sum(lnp.tanh(x * scale) ** 2)

    x = np.linspace(-1, 1, 5 + i % 3).astype(np.float32)
    g = loom.jit(loom.grad(f))(x)
    v = loom.vmap(loom.grad(f))(np.stack([x, 2 * x]))
    t = loom.jvp(f, (x,), (np.ones_like(x),))[1]
    c = lax.cond(x.sum() >= 0, lambda y: y * scale, lambda y: y - 1, x)
    w = lax.while_loop(lambda s: s[0] < 3 + i % 2, lambda s: (s[0] + 1, s[1] * scale), (0, x))[1]
    h = loom.grad(lambda y: lax.fori_loop(0, 2 + i % 3, lambda _, a: lnp.sin(a) * scale, y).sum())(x)
    return [np.asarray(a) for a in (g, v, t, c, w, h)]


def test_threads_trace_and_transform_independently():
    expected = [_work(i) for i in range(CALLS)]
    results: list = [None] * CALLS
    errors: list[tuple[int, str]] = []
    start = threading.Barrier(THREADS, timeout=60)

    def run(thread: int) -> None:
        try:
            start.wait()
            for i in range(thread, CALLS, THREADS):
                results[i] = _work(i)
        except BaseException as e:  # reported below with the thread's number
            errors.append((thread, repr(e)))

    threads = [threading.Thread(target=run, args=(t,), daemon=True) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in threads), "a thread did not finish within 300 s"
    assert not errors, errors
    for i, (got, want) in enumerate(zip(results, expected)):
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"call {i}, result {k}")
