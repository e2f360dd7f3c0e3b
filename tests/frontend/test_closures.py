"""Closure capture: a function transformed by grad / value_and_grad / vjp / jvp / vmap / linearize
inside an enclosing trace may read the enclosing function's traced values (as in JAX); they are
lifted into the inner trace as extra, implicit arguments. Checked against jax."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom.frontend.tracing import TracerError

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 2)).astype(np.float32)
W = RNG.standard_normal((2,)).astype(np.float32)
B = RNG.standard_normal((3,)).astype(np.float32)


def _close(a, b, tol=1e-5):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=tol, atol=tol)


def test_grad_in_jit_closes_over_argument():
    def step(m, g):
        def f(w, x):
            return g(lambda w: m.sum(m.tanh(x @ w)))(w)
        return f

    _close(loom.jit(step(lnp, loom.grad))(W, X), jax.jit(step(jnp, jax.grad))(W, X))


def test_grad_in_jit_closes_over_intermediate():
    def step(m, g):
        def f(w, x):
            h = m.sin(x) * 2.0  # a value computed in the enclosing trace
            return g(lambda w: m.sum(m.tanh(h @ w) ** 2))(w)
        return f

    _close(loom.jit(step(lnp, loom.grad))(W, X), jax.jit(step(jnp, jax.grad))(W, X))


def test_value_and_grad_has_aux_two_captures():
    def step(m, vg):
        def f(w, x, b):
            def loss(w):
                y = m.tanh(x @ w) + b
                return m.sum(y ** 2), {"mean": m.mean(y), "b": b * 1.0}
            return vg(loss, has_aux=True)(w)
        return f

    _close(loom.jit(step(lnp, loom.value_and_grad))(W, X, B), jax.jit(step(jnp, jax.value_and_grad))(W, X, B))


def test_vjp_in_jit_closes_over_argument():
    def step(m, vjp):
        def f(w, x):
            out, fn = vjp(lambda w: m.tanh(x @ w), w)
            return out, fn(m.ones_like(out))
        return f

    _close(loom.jit(step(lnp, loom.vjp))(W, X), jax.jit(step(jnp, jax.vjp))(W, X))


def test_vmap_in_jit_closes_over_traced_array():
    def step(m, vm):
        def f(xs, w):
            v = m.cos(w) + 1.0
            return vm(lambda x: m.sum(x * v) + m.max(x))(xs)
        return f

    xs = RNG.standard_normal((5, 2)).astype(np.float32)
    _close(loom.jit(step(lnp, loom.vmap))(xs, W), jax.jit(step(jnp, jax.vmap))(xs, W))


def test_jvp_in_jit_closes_over_argument():
    def step(m, jvp):
        def f(w, x, t):
            return jvp(lambda w: m.sin(x @ w), (w,), (t,))
        return f

    t = RNG.standard_normal((2,)).astype(np.float32)
    _close(loom.jit(step(lnp, loom.jvp))(W, X, t), jax.jit(step(jnp, jax.jvp))(W, X, t))


def test_linearize_in_jit_closes_over_argument():
    def step(m, lin):
        def f(w, x, t):
            out, f_jvp = lin(lambda w: m.sin(x @ w), w)
            return out, f_jvp(t)
        return f

    t = RNG.standard_normal((2,)).astype(np.float32)
    _close(loom.jit(step(lnp, loom.linearize))(W, X, t), jax.jit(step(jnp, jax.linearize))(W, X, t))


def test_grad_of_grad_through_closure():
    def outer(m, g, w):
        def f(w, x):
            return m.sum(m.tanh(x @ w) ** 2)

        return g(lambda x: g(lambda w: f(w, x))(w)[0])

    _close(outer(lnp, loom.grad, W)(X), outer(jnp, jax.grad, W)(X))

    def in_jit(m, g):
        return lambda w, x: outer(m, g, w)(x)

    _close(loom.jit(in_jit(lnp, loom.grad))(W, X), jax.jit(in_jit(jnp, jax.grad))(W, X))


def test_capture_two_levels_deep():
    def step(m, g, vm):
        def f(w, x, zs):
            def loss(w):
                # the vmapped function reads x, a value of the jit trace two levels down
                return m.sum(vm(lambda z: m.tanh(x @ w + z))(zs))
            return g(loss)(w)
        return f

    zs = RNG.standard_normal((4, 3)).astype(np.float32)
    _close(loom.jit(step(lnp, loom.grad, loom.vmap))(W, X, zs), jax.jit(step(jnp, jax.grad, jax.vmap))(W, X, zs))


def test_checkpoint_inside_grad_closes_over_jit_value():
    def step(m, g, ckpt):
        def f(w, x):
            return g(lambda w: m.sum(ckpt(lambda w: m.sin(x @ w))(w) ** 2))(w)
        return f

    _close(loom.jit(step(lnp, loom.grad, loom.checkpoint))(W, X), jax.jit(step(jnp, jax.grad, jax.checkpoint))(W, X))


def test_returning_a_captured_value():
    def step(m, vg):
        def f(w, x):
            return vg(lambda w: (m.sum(w * 2.0), x), has_aux=True)(w)
        return f

    _close(loom.jit(step(lnp, loom.value_and_grad))(W, X), jax.jit(step(jnp, jax.value_and_grad))(W, X))


def test_leaked_tracer_still_raises():
    leaked = []

    def store(x):
        leaked.append(x)
        return x * 2.0

    loom.jit(store)(W)

    def use(x):
        return x + leaked[0]

    with pytest.raises(TracerError, match="mixed"):
        loom.jit(use)(W)

    def use_in_grad(x):
        return loom.grad(lambda w: lnp.sum(w * leaked[0]))(x)

    with pytest.raises(TracerError):
        loom.jit(use_in_grad)(W)
