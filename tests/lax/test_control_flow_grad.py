"""Reverse mode through loom.lax control flow: cond / switch / scan / fori_loop against jax.grad,
while_loop with data-dependent trip counts against float64 finite differences, the gradient cases
of TensorFlow's control_flow_ops_py_test.py (WhileGrad_*, CondGrad_*: expected values derived by
hand and by finite differences), the backward program's text round trip and the
two executors, second order, and the memory policies."""

from __future__ import annotations

import numpy as np
import pytest
from support.oracles import finite_differences

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom import lax
from loom.frontend.grad import _Differentiable
from loom.runtime.executable import execute


@pytest.fixture(autouse=True)
def _float64():
    """The gradients are checked against float64 finite differences: 64-bit values on in loom."""
    with loom.config.override(enable_x64=True):
        yield

jax = pytest.importorskip("jax")
jnp = jax.numpy


def backward_program(f, args, argnums=0):
    """The gradient of scalar `f` w.r.t. `argnums` from its backward program: printed, parsed
    back (byte-identical), verified, and run in the interpreter and the compiled executor, which
    must agree. Returns (program text, gradients as a tuple of arrays)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    traced, leaves, groups = _Differentiable(f, False).prepare(tuple(args), {}, nums)
    text = lir.print(traced.module, generic=True)
    module = lir.parse(text)
    assert lir.print(module, generic=True) == text
    module.verify()
    ins = [*leaves, np.ones((), traced.out_avals[0][1])]
    interp = execute(module, *ins, executor="interpreter")
    compiled = execute(module, *ins, executor="compiled")
    for a, b in zip(interp, compiled):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    n = sum(len(g) for g in groups)
    return text, tuple(np.asarray(g) for g in compiled[len(compiled) - n:])


# --- section 6.1 (TensorFlow's control-flow gradient tests) -----------------------------------------


def square_loop(v):
    return lax.while_loop(lambda v: v < 100.0, lambda v: v * v, v)


def test_while_grad_square_and_multiple_uses():
    text, (g,) = backward_program(square_loop, (np.float32(2),))
    assert float(g) == 1024.0
    assert "stack.push" in text and "stack.pop" in text and "!stack.stack<tensor<f32>>" in text
    assert float(loom.grad(lambda v: lax.cond(1 < 2, square_loop, lambda v: v, v))(np.float32(2))) == 1024.0
    assert float(loom.grad(lambda v: square_loop(v) * square_loop(v))(np.float32(2))) == 524288.0
    assert float(loom.grad(lambda v: square_loop(v) + square_loop(v))(np.float32(2))) == 2048.0


def test_while_grad_mul_and_dependency():
    def mul(a, v):
        return lax.while_loop(lambda v: v < 100.0, lambda v: v * a, v)
    _, (ga, gv) = backward_program(mul, (np.float32(3), np.float32(2)), (0, 1))
    assert (float(ga), float(gv)) == (216.0, 81.0)

    def dependency(x):
        return lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] + 1, s[1] * 2), (np.int32(0), x))[1]
    _, (g,) = backward_program(dependency, (np.float32(2),))
    assert float(g) == 1024.0


def test_zero_iteration_loop_passes_the_gradient_through():
    def f(x):
        r = lax.while_loop(lambda v: False, lambda v: v * x, lnp.array([2.0, 2.0], np.float32))
        return lnp.sum(r + x * x)
    _, (g,) = backward_program(f, (np.array([1.0, 2.0], np.float32),))
    np.testing.assert_array_equal(g, [2.0, 4.0])

    def g_(x, n):
        return lnp.sum(lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 3.0), (np.int32(0), x))[1])
    np.testing.assert_array_equal(loom.grad(g_)(np.ones(2, np.float32), np.int32(0)), [1.0, 1.0])
    np.testing.assert_array_equal(loom.grad(g_)(np.ones(2, np.float32), np.int32(2)), [9.0, 9.0])


def test_while_grad_no_gradient():
    """TF's WhileGrad_NoGradient: a loop built with back_prop=False (in loom, as in JAX, its result
    through lax.stop_gradient); grad of r + v is 1. The backward program saves nothing: the loop is
    outside the differentiated path, so it has no stacks and no backward loop."""
    def f(v):
        r = lax.stop_gradient(lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, v))
        return r + v
    assert float(loom.jit(f)(np.float32(2))) == 18.0
    text, (g,) = backward_program(f, (np.float32(2),))
    assert float(g) == 1.0
    assert '"ad.stop_gradient"' in text and "stack." not in text and text.count("stablehlo.while") == 1
    # without the stop, the loop's gradient (2^3 = 8) adds to it
    assert float(loom.grad(lambda v: lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, v) + v)(np.float32(2))) \
        == 9.0
    # as in jax (whose grad cannot go through a while loop without the stop)
    assert float(jax.grad(lambda v: jax.lax.stop_gradient(jax.lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, v))
                          + v)(np.float32(2))) == 1.0


def test_cond_grads_section6():
    assert float(loom.grad(lambda x: lax.cond(x > 0, lambda x: x, lambda x: x, x))(np.float32(1))) == 1.0
    for c, e in ((1, 42.0), (3, 3.0)):
        f = loom.grad(lambda x, c: lax.cond(c < 2, lambda x: 42.0 * x, lambda x: 3.0 * x, x))
        assert float(f(np.float32(10), np.int32(c))) == e

    def jaxlike(x):
        return lax.cond(x < 2, lambda x: 3.0 * x, lnp.sin, x)
    _, (g,) = backward_program(jaxlike, (np.float32(2.14),))
    np.testing.assert_allclose(g, np.cos(2.14), rtol=1e-6)
    _, (g,) = backward_program(jaxlike, (np.float32(1.72),))
    assert float(g) == 3.0


# --- against jax.grad: cond, switch, scan, fixed-bound fori_loop -------------------------------------


def _structured(m, lx):
    def f(w, b, xs, h0):
        def cell(h, x):
            h = m.tanh(w @ h + x + b)
            h = lx.cond(m.sum(h) > 0, lambda h: h * 1.5, lambda h: m.sin(h), h)
            return h, m.sum(h * h)
        h, ys = lx.scan(cell, h0, xs)
        h = lx.switch(1, [lambda h: h, lambda h: m.exp(h) * b, lambda h: -h], h)
        h = lx.fori_loop(0, 3, lambda i, h: m.tanh(w @ h) + h * 0.5, h)
        _, rs = lx.scan(lambda c, x: (c * 0.9 + x, c * x), m.sum(h), ys, reverse=True)
        return m.sum(rs) + m.sum(h)
    return f


def test_grads_match_jax():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(4, 4)).astype(np.float32) * 0.4, rng.normal(size=4).astype(np.float32) * 0.1,
            rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32))
    _, got = backward_program(_structured(lnp, lax), args, (0, 1, 2, 3))
    want = jax.grad(_structured(jnp, jax.lax), argnums=(0, 1, 2, 3))(*map(jnp.asarray, args))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_switch_grad_every_branch_and_scan_over_pytrees():
    branches = [lambda x, y: x * y, lambda x, y: lnp.sin(x) + y, lambda x, y: x / y]
    jbranches = [lambda x, y: x * y, lambda x, y: jnp.sin(x) + y, lambda x, y: x / y]
    for i in range(-1, 4):
        got = loom.grad(lambda x, y, i=i: lax.switch(i, branches, x, y), (0, 1))(np.float32(0.7), np.float32(1.3))
        want = jax.grad(lambda x, y, i=i: jax.lax.switch(i, jbranches, x, y), (0, 1))(0.7, 1.3)
        np.testing.assert_allclose(got, want, rtol=1e-6)

    def f(m, lx):
        def g(p, xs):
            c, ys = lx.scan(lambda c, x: ({"a": c["a"] * x["u"], "b": c["b"] + m.cos(x["v"])}, c["a"] + x["v"]),
                            {"a": p, "b": p * 2.0}, xs, unroll=3)
            return m.sum(ys) + m.sum(c["a"] * c["b"])
        return g
    rng = np.random.default_rng(3)
    xs = {"u": rng.normal(size=(6, 2)).astype(np.float32), "v": rng.normal(size=(6, 2)).astype(np.float32)}
    p = rng.normal(size=2).astype(np.float32)
    got = loom.grad(f(lnp, lax), (0, 1))(p, xs)
    want = jax.grad(f(jnp, jax.lax), (0, 1))(p, xs)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# --- data-dependent while loops against float64 finite differences -----------------------------------


def rnn_until(w, u, b, xs, h0):
    """An RNN cell run until its state's norm passes a threshold (or the inputs run out)."""
    n = xs.shape[0]

    def cond(s):
        i, h = s
        return lnp.logical_and(i < n, lnp.sum(h * h) < 3.0)

    def body(s):
        i, h = s
        return i + 1, lnp.tanh(w @ h + u @ xs[i] + b)
    _, h = lax.while_loop(cond, body, (np.int32(0), h0))
    return lnp.sum(h * lnp.arange(1, h.shape[0] + 1))


def newton_sqrt(a):
    def body(s):
        x, _ = s
        return 0.5 * (x + a / x), x
    x, _ = lax.while_loop(lambda s: lnp.abs(s[0] - s[1]) > 1e-12, body, (a, a * 0.0))
    return x


def bisection(c):
    """The root of t**3 + c*t - 1 on [0, 1] by bisection (a loop whose result depends on c only
    through its stopping point), refined by one Newton step so it is differentiable in c."""
    def f(t):
        return t * t * t + c * t - 1.0

    def body(s):
        lo, hi = s
        mid = 0.5 * (lo + hi)
        go_left = f(mid) > 0
        return lax.cond(go_left, lambda: (lo, mid), lambda: (mid, hi))
    lo, hi = lax.while_loop(lambda s: s[1] - s[0] > 1e-3, body, (c * 0.0, c * 0.0 + 1.0))
    t = 0.5 * (lo + hi)
    return t - f(t) / (3 * t * t + c)


def nested(x, a):
    """Loops inside conds inside a loop, with captured values."""
    def outer(s):
        i, v = s

        def grow(v):
            return lax.while_loop(lambda u: lnp.sum(u * u) < 4.0 + i, lambda u: u * a + 0.1, v)

        def shrink(v):
            return lax.fori_loop(0, 2, lambda k, u: lnp.sin(u) * a, v)
        v = lax.cond(lnp.sum(v) > 0, grow, shrink, v)
        return i + 1, v * 0.7
    _, v = lax.while_loop(lambda s: s[0] < 4, outer, (np.int32(0), x))
    return lnp.sum(v * v)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rnn_with_data_dependent_stopping(seed):
    rng = np.random.default_rng(seed)
    h = 3
    args = [rng.normal(size=(h, h)) * 0.6, rng.normal(size=(h, 2)) * 0.6, rng.normal(size=h) * 0.3,
            rng.normal(size=(12, 2)), rng.normal(size=h) * 0.3]
    text, grads = backward_program(rnn_until, args, (0, 1, 2, 3, 4))
    assert "stack.pop" in text
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, finite_differences(rnn_until, args, k), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("a", [2.0, 0.3, 10.0])
def test_newton_sqrt(a):
    _, (g,) = backward_program(newton_sqrt, (np.array(a, np.float64),))
    np.testing.assert_allclose(g, 0.5 / np.sqrt(a), rtol=1e-8)
    np.testing.assert_allclose(g, finite_differences(newton_sqrt, [np.array(a, np.float64)], 0), rtol=1e-6)


@pytest.mark.parametrize("c", [0.5, 1.7])
def test_bisection(c):
    args = [np.ones(()) * c]
    _, (g,) = backward_program(bisection, args)
    np.testing.assert_allclose(g, finite_differences(bisection, args, 0), rtol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_nested_loops_inside_conds_inside_loops(seed):
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=3) * 0.8, np.ones(()) * (1.1 + 0.1 * seed)]
    _, grads = backward_program(nested, args, (0, 1))
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, finite_differences(nested, args, k), rtol=1e-5, atol=1e-8)


def test_backward_program_on_the_torch_backend():
    # stacks of saved values on the torch backend hold the tensors themselves (stack_kernels.py)
    pytest.importorskip("torch")
    from loom.backend.compiled import Executable

    args = (np.array([1.0, 2.0], np.float32), np.float32(1.5))

    def f(v, a):
        return lax.while_loop(lambda v: lnp.sum(v) < 100.0, lambda v: v * a + lnp.sin(v), v).sum()
    traced, leaves, _ = _Differentiable(f, False).prepare(args, {}, (0, 1))
    ins = [*leaves, np.float32(1)]
    want = Executable(traced.module, "main")(*ins)
    got = Executable(traced.module, "main", backend="torch")(*ins)
    for a, b in zip(want, got):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-6)
