"""vmap of loom.lax control flow: batched while predicates (run until every lane is done, finished
lanes frozen), batched cond / switch selectors (every branch runs, a select chooses, the inputs of
unselected branches masked so no NaN reaches gradients), against section 6.2 and jax.vmap."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom import lax

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_while_loop_batched_predicate():
    out = loom.vmap(lambda x: lax.while_loop(lambda x: x < 3, lambda x: x + 2, x))(np.array([0, 1, 2, 3], np.int32))
    np.testing.assert_array_equal(out, [4, 3, 4, 3])


def test_fori_loop_batched():
    x, y = loom.vmap(lambda x, y: lax.fori_loop(0, 10, lambda i, s: (s[0] + 1, s[1] + 2), (x, y)), (0, None))(
        np.array([0, 1], np.int32), np.int32(0))
    np.testing.assert_array_equal(x, [10, 11])
    np.testing.assert_array_equal(y, [20, 20])


def test_cond_batched_section6():
    f = loom.vmap(lambda x, y, z: lax.cond(x < 3, lambda: y, lambda: -z), (0, 0, None))
    np.testing.assert_array_equal(f(np.array([2, 4], np.int32), np.array([1, 2], np.float32), np.float32(5)), [1, -5])
    g = loom.vmap(lambda x, y, z: lax.cond(x < 3, lambda: y, lambda: -z))
    np.testing.assert_array_equal(g(np.array([2, 4], np.int32), np.array([1, 2], np.float32),
                                    np.array([3, 4], np.float32)), [1, -4])
    text = loom.jit(g).lower(np.zeros(2, np.int32), np.zeros(2, np.float32), np.zeros(2, np.float32)).as_text()
    assert "stablehlo.select" in text and "stablehlo.if" not in text


def test_unselected_branch_sends_no_nan_to_gradients():
    def f(x):
        return lax.cond(x > 0, lambda x: lnp.log(x), lambda x: x * 2.0, x)
    xs = np.array([1.0, -1.0, 0.0, 2.0], np.float32)
    np.testing.assert_allclose(loom.vmap(loom.grad(f))(xs), [1.0, 2.0, 2.0, 0.5])
    np.testing.assert_allclose(loom.grad(lambda xs: lnp.sum(loom.vmap(f)(xs)))(xs), [1.0, 2.0, 2.0, 0.5])
    w = np.float32(0.0)  # a shared value used by the unselected branch of every lane
    batched = loom.vmap(lambda x, w: lax.cond(x > 0, lambda: x * 3.0, lambda: lnp.log(w) * x), (0, None))
    gw = loom.grad(lambda w, xs: lnp.sum(batched(xs, w)))(w, np.array([1.0, 2.0], np.float32))
    assert float(gw) == 0.0


def test_against_jax_vmap():
    def program(m, lx):
        def f(i, x, y):
            a = lx.switch(i, [lambda x: x * y, lambda x: m.sin(x) + y, lambda x: -x], x)
            b = lx.while_loop(lambda v: m.sum(v * v) < 10.0 + x, lambda v: v * 1.5 + y, m.ones(2) * y)
            c, ys = lx.scan(lambda c, t: (c * t + y, c), x, m.arange(3.0))
            d = lx.cond(x > 0.5, lambda: m.exp(x) * b, lambda: b - y)
            return a, b, c, ys, d
        return f
    rng = np.random.default_rng(0)
    i = np.array([-1, 0, 1, 2, 3, 1], np.int32)
    x = rng.uniform(0, 1, size=6).astype(np.float32)
    y = rng.uniform(0.2, 0.6, size=6).astype(np.float32)
    got = loom.vmap(program(lnp, lax))(i, x, y)
    want = jax.vmap(program(jnp, jax.lax))(i, x, y)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    # gradients of the batched program
    gx = loom.grad(lambda x: lnp.sum(loom.vmap(program(lnp, lax))(i, x, y)[4]))(x)
    jx = jax.grad(lambda x: jnp.sum(jax.vmap(program(jnp, jax.lax))(i, x, y)[4]))(x)
    np.testing.assert_allclose(gx, jx, rtol=1e-4)


def test_per_example_gradients_through_scan_and_fori():
    def program(m, lx):
        def loss(w, xs):
            h, ys = lx.scan(lambda h, x: (m.tanh(w @ h + x), m.sum(h)), m.zeros(4, np.float32), xs)
            h = lx.fori_loop(0, 3, lambda i, h: m.sin(h) * 1.1, h)
            return m.sum(h * h) + m.sum(ys)
        return loss
    rng = np.random.default_rng(4)
    w = (rng.normal(size=(4, 4)) * 0.5).astype(np.float32)
    xs = rng.normal(size=(3, 5, 4)).astype(np.float32)
    gw, gx = loom.vmap(loom.grad(program(lnp, lax), (0, 1)), (None, 0))(w, xs)
    jw, jx = jax.vmap(jax.grad(program(jnp, jax.lax), (0, 1)), (None, 0))(w, xs)
    np.testing.assert_allclose(gw, jw, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(gx, jx, rtol=2e-5, atol=1e-6)


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_gradient_of_a_loop_with_per_lane_trip_counts():
    # each lane's loop runs its own number of iterations (4, 3, 2, 0 here); the batched forward
    # loop starts the shorter lanes late so the backward loop pops every lane's values in order
    def f(x, a):
        return lax.while_loop(lambda v: v < 100.0, lambda v: v * a, x)
    xs, a = np.array([2.0, 5.0, 30.0, 200.0], np.float32), np.float32(3)
    gx, ga = loom.vmap(loom.grad(f, (0, 1)), (0, None))(xs, a)
    np.testing.assert_array_equal(gx, [81.0, 27.0, 9.0, 1.0])
    np.testing.assert_array_equal(ga, [216.0, 135.0, 180.0, 0.0])

    def g(h, w):
        return lnp.sum(lax.while_loop(lambda v: lnp.sum(v * v) < 10.0, lambda v: lnp.tanh(w @ v) * 1.5 + 0.5, h))
    rng = np.random.default_rng(0)
    hs, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    gh, gw = loom.vmap(loom.grad(g, (0, 1)), (0, None))(hs, w)
    for k in range(3):
        eh, ew = loom.grad(g, (0, 1))(hs[k], w)
        np.testing.assert_allclose(gh[k], eh, rtol=1e-12)
        np.testing.assert_allclose(gw[k], ew, rtol=1e-12)
