"""Placed programs (loom.placement) shared by the mpmd tests, the gloo workers and the example:
each runs as it is on one device, which is the oracle of its partitioned runs."""

from __future__ import annotations

import numpy as np

import loom
import loom.numpy as lnp
from loom import lax


def operands(n: int = 6, size: int = 8, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.standard_normal(size).astype(dtype), np.int32(n)


def pipeline(x, n):
    """Two stages on two devices: a recurrence and the data-dependent predicate on device 0, an
    accumulator fed by it on device 1 (device 0 may run ahead of device 1)."""
    def cond(c):
        i, h, _ = c
        with loom.placement(0):
            return (i < n) & (h.sum() < 4.0)

    def body(c):
        i, h, acc = c
        with loom.placement(0):
            h = lnp.tanh(h * 1.1 + 0.1)
            i = i + 1
        with loom.placement(1):
            acc = acc + lnp.sin(h) * 0.5
        return i, h, acc

    with loom.placement(1):
        acc0 = lnp.zeros_like(x)
    with loom.placement(0):
        i0 = lnp.int32(0)
    return lax.while_loop(cond, body, (i0, x, acc0))


def three_devices(x, n):
    """A loop over three devices: a conditional on device 1 inside it, a loop nested in it on
    device 2, and a conditional decided on device 0 whose branches live on device 2 only."""
    def cond(c):
        with loom.placement(0):
            return c[0] < n

    def body(c):
        i, h, acc = c
        with loom.placement(0):
            h = lnp.tanh(h + 0.3 * lnp.cos(acc))
            i = i + 1
            decide = h.sum() > 0
        with loom.placement(1):
            g = lax.cond(h[0] > 0, lambda v: v * 2.0, lambda v: -v + 0.5, h)
        with loom.placement(2):
            r, k = lax.while_loop(lambda s: lnp.abs(s[0]).max() > 0.25, lambda s: (s[0] * 0.5, s[1] + 1),
                                  (g, lnp.int32(0)))
            acc = acc + r + k.astype(r.dtype)
        with loom.placement(0):
            acc = lax.cond(decide, lambda a: _on(2, lambda: a * 0.5), lambda a: _on(2, lambda: a - 1.0), acc)
        return i, h, acc

    with loom.placement(2):
        acc0 = lnp.zeros_like(x)
    return lax.while_loop(cond, body, (lnp.int32(0), x, acc0))


def _on(device: int, f):
    with loom.placement(device):
        return f()


def pipeline_loss(x, n):
    """The pipeline's accumulator, reduced: its gradient goes back through the partitioned loop."""
    _, h, acc = pipeline(x, n)
    with loom.placement(1):
        return (acc * acc).sum() + 0.1 * h.sum()


def four_stages(x, n):
    """A loop whose body is a chain of four stages, stage k on device k, the predicate on device 3
    (the last stage): every device waits for it before its next iteration."""
    def cond(c):
        with loom.placement(3):
            return (c[0] < n) & (lnp.abs(c[1]).sum() < 100.0)

    def body(c):
        i, h = c
        with loom.placement(0):
            h = lnp.tanh(h) + 0.5
            i = i + 1
        with loom.placement(1):
            h = h * 1.25
        with loom.placement(2):
            h = lnp.sin(h) + h
        with loom.placement(3):
            h = h - 0.1 * lnp.cos(h)
        return i, h

    with loom.placement(0):
        i0 = lnp.int32(0)
    return lax.while_loop(cond, body, (i0, x))


def homed(x, n):
    """A loop whose home is device 0 (`devices=(0, 1)`): its predicate and its unplaced body ops
    run there; only the accumulator is placed, explicitly, on device 1."""
    def body(c):
        i, h, acc = c
        h = lnp.tanh(h * 1.1 + 0.1)
        i = i + 1
        with loom.placement(1):
            acc = acc + lnp.sin(h) * h
        return i, h, acc
    with loom.placement(1):
        acc0 = lnp.zeros_like(x)
    return lax.while_loop(lambda c: (c[0] < n) & (c[1].sum() < 4.0), body, (lnp.int32(0), x, acc0),
                          parallel_iterations=2, devices=(0, 1))


def homed_loss(x, n):
    _, h, acc = homed(x, n)
    with loom.placement(1):
        return (acc * acc).sum() + 0.5 * (h * h).sum()


def nested(x, n):
    """An outer loop with `parallel_iterations=4` over devices 0 (its predicate and a recurrence),
    1 and 2, holding an inner loop with `parallel_iterations=1` homed on device 2 (its predicate
    and counter) whose carry is updated on device 1."""
    def outer(c):
        i, h, acc = c
        with loom.placement(0):
            h = lnp.tanh(h * 1.1 + 0.1)
            i = i + 1

        def inner(s):
            j, g = s
            j = j + 1
            with loom.placement(1):
                g = lnp.sin(g) * 0.5 + h
            return j, g
        _, g = lax.while_loop(lambda s: s[0] < 3, inner, (lnp.int32(0), h), parallel_iterations=1, devices=(2, 1))
        with loom.placement(1):
            acc = acc + g
        return i, h, acc
    with loom.placement(1):
        acc0 = lnp.zeros_like(x)
    return lax.while_loop(lambda c: _on(0, lambda: c[0] < n), outer, (lnp.int32(0), x, acc0), parallel_iterations=4)


def mixed_types(x, n):
    """Values of several dtypes and shapes crossing from device 0 to device 1, in a loop (bfloat16,
    int8, bool, a float scalar) and outside it (an int32 matrix): a message is its bytes only,
    the receiver knows its type from the program."""
    def body(c):
        i, h, acc, count = c
        with loom.placement(0):
            h = lnp.tanh(h * 1.3 + 0.2)
            low, signs, big = h.astype(lnp.bfloat16), (h * 100).astype(lnp.int8), h.sum() > 0
            wide = h.sum() * 0.5
            i = i + 1
        with loom.placement(1):
            acc = acc + low.astype(acc.dtype) + signs.astype(acc.dtype) * wide.astype(acc.dtype)
            count = count + big.astype(lnp.int32)
        return i, h, acc, count

    with loom.placement(1):
        acc0, count0 = lnp.zeros_like(x), lnp.int32(0)
    with loom.placement(0):
        grid = (lnp.arange(6, dtype=lnp.int32).reshape(2, 3) * n)
    _, h, acc, count = lax.while_loop(lambda c: _on(0, lambda: c[0] < n), body, (lnp.int32(0), x, acc0, count0))
    with loom.placement(1):
        return h, acc, count + grid.sum(), grid.T + count
