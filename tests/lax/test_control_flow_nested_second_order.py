"""Second-order reverse mode through loops nested in loops: while in while, scan in while, while in
cond in while (and fori in fori against jax). Each Hessian-vector product (grad of a scalar
projection of the gradient) is checked against float64 central differences of loom's first-order
gradient; where the trip counts are fixed, the same program in jax gives the oracle too (jax runs
the while loops as fori_loop / scan, which it can differentiate)."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom import lax


@pytest.fixture(autouse=True)
def _float64():
    """The derivatives are checked in float64 (finite differences, tight tolerances): 64-bit
    values on in loom."""
    with loom.config.override(enable_x64=True):
        yield

jax = pytest.importorskip("jax")
jnp = jax.numpy


pytestmark = pytest.mark.usefixtures("jax_x64")


def _while_in_while(m, lx, fixed):
    """Outer loop over i < 3; the inner one runs i + 2 times (data-dependent through the outer
    counter), or until the carry's norm passes a threshold (data-dependent on values)."""
    def f(x, w):
        def outer_body(s):
            i, h = s

            def inner_body(t):
                j, g = t
                return j + 1, m.tanh(g * w + 0.1 * m.sin(g))
            if fixed:
                _, h = lx.while_loop(lambda t: t[0] < i + 2, inner_body, (0, h))
            else:
                _, h = lx.while_loop(lambda t: m.logical_and(t[0] < 6, m.sum(t[1] * t[1]) < 50.0), inner_body,
                                     (0, h * 1.5 + 0.2))
            return i + 1, h * w + x
        return m.sum(lx.while_loop(lambda s: s[0] < 3, outer_body, (0, x))[1] ** 2)
    return f


def _while_in_while_jax(x, w):
    """`_while_in_while(fixed=True)` with the trip counts spelled out for jax."""
    h = x
    for i in range(3):
        h = jax.lax.fori_loop(0, i + 2, lambda k, g: jnp.tanh(g * w + 0.1 * jnp.sin(g)), h)
        h = h * w + x
    return jnp.sum(h ** 2)


def _scan_in_while(m, lx):
    def f(x, w):
        xs = m.stack([x * 0.5, x * -0.3, x * 0.2, x])

        def outer_body(s):
            i, h = s

            def step(c, xi):
                c = m.tanh(c * w + xi)
                return c, c * c
            c, ys = lx.scan(step, h, xs)
            return i + 1, c + 0.1 * m.sum(ys, axis=0)
        return m.sum(lx.while_loop(lambda s: s[0] < 3, outer_body, (0, x))[1] * w)
    return f


def _scan_in_fori_jax(x, w):
    xs = jnp.stack([x * 0.5, x * -0.3, x * 0.2, x])

    def outer(i, h):
        def step(c, xi):
            c = jnp.tanh(c * w + xi)
            return c, c * c
        c, ys = jax.lax.scan(step, h, xs)
        return c + 0.1 * jnp.sum(ys, axis=0)
    return jnp.sum(jax.lax.fori_loop(0, 3, outer, x) * w)


def _while_in_cond_in_while(m, lx):
    """The outer loop runs while the carry's sum is below a bound; each iteration either runs an
    inner Newton-like while loop or a plain update, by a data-dependent predicate."""
    def f(x, w):
        def outer_body(s):
            i, h = s

            def inner(h):
                def body(t):
                    j, g = t
                    return j + 1, g - 0.3 * (g * g * w - 1.0) / (1.0 + g * g)
                return lx.while_loop(lambda t: m.logical_and(t[0] < 4, m.max(m.abs(t[1])) < 10.0), body, (0, h))[1]
            h = lx.cond(m.sum(h) > i * 0.5, inner, lambda h: m.sin(h) * w + h, h)
            return i + 1, h + 0.25 * x
        return m.sum(lx.while_loop(lambda s: m.logical_and(s[0] < 5, m.sum(s[1]) < 20.0), outer_body,
                                   (0, x))[1] ** 2 * w)
    return f


def _fori_in_fori(m, lx):
    def f(x, w):
        def outer(i, h):
            return lx.fori_loop(0, 3, lambda j, g: m.sin(g * w) + g * 0.5, h) * w + x
        return m.sum(lx.fori_loop(0, 3, outer, x) ** 2)
    return f


def _hvp(f, v):
    """x, w -> the gradient of <grad_x f(x, w), v> w.r.t. (x, w)."""
    def proj(x, w):
        return lnp.sum(loom.grad(f, argnums=0)(x, w) * v)
    return loom.grad(proj, argnums=(0, 1))


def _fd_hvp(f, v, x, w, eps=1e-5):
    """Central differences of the first-order gradient <grad_x f, v> (float64)."""
    def proj(x, w):
        return float(np.sum(np.asarray(loom.grad(f, argnums=0)(x, w)) * v))
    gx = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        gx.flat[k] = (proj(x + e, w) - proj(x - e, w)) / (2 * eps)
    gw = (proj(x, np.asarray(w + eps)) - proj(x, np.asarray(w - eps))) / (2 * eps)
    return gx, gw


def _check(f, x, w, v, jax_f=None):
    gx, gw = _hvp(f, v)(x, w)
    fx, fw = _fd_hvp(f, v, x, w)
    np.testing.assert_allclose(gx, fx, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(gw, fw, rtol=2e-6, atol=1e-7)
    if jax_f is not None:
        def jproj(x, w):
            return jnp.sum(jax.grad(jax_f)(x, w) * v)
        jx, jw = jax.grad(jproj, argnums=(0, 1))(x, w)
        np.testing.assert_allclose(gx, jx, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gw, jw, rtol=1e-10, atol=1e-12)
        # and the first order too
        np.testing.assert_allclose(loom.grad(f, argnums=(0, 1))(x, w)[0], jax.grad(jax_f)(x, w), rtol=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_while_in_while_fixed_trip_counts_vs_jax_and_differences(seed):
    rng = np.random.default_rng(seed)
    x, w, v = rng.uniform(-0.5, 0.5, size=3), np.array(rng.uniform(0.5, 0.9)), rng.normal(size=3)
    _check(_while_in_while(lnp, lax, True), x, w, v, _while_in_while_jax)


@pytest.mark.parametrize("seed", [0, 1])
def test_while_in_while_data_dependent_vs_differences(seed):
    rng = np.random.default_rng(seed)
    x, w, v = rng.uniform(-0.5, 0.5, size=3), np.array(rng.uniform(0.5, 0.9)), rng.normal(size=3)
    _check(_while_in_while(lnp, lax, False), x, w, v)


@pytest.mark.parametrize("seed", [0, 1])
def test_scan_in_while_vs_jax_and_differences(seed):
    rng = np.random.default_rng(seed)
    x, w, v = rng.uniform(-0.5, 0.5, size=3), np.array(rng.uniform(0.5, 0.9)), rng.normal(size=3)
    _check(_scan_in_while(lnp, lax), x, w, v, _scan_in_fori_jax)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_while_in_cond_in_while_vs_differences(seed):
    rng = np.random.default_rng(seed)
    x, w, v = rng.uniform(-0.2, 0.8, size=3), np.array(rng.uniform(0.5, 0.9)), rng.normal(size=3)
    _check(_while_in_cond_in_while(lnp, lax), x, w, v)


def test_fori_in_fori_vs_jax():
    rng = np.random.default_rng(3)
    x, w, v = rng.uniform(-0.5, 0.5, size=3), np.array(0.7), rng.normal(size=3)
    _check(_fori_in_fori(lnp, lax), x, w, v, _fori_in_fori(jnp, jax.lax))
