"""Second-order reverse mode through cond and while (the stacks of saved values get paired stacks
of cotangents), and the memory policies of while_loop: identical gradients, and the
checkpointing policy's peak saved bytes growing as O(sqrt(n))."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom import lax
from loom.frontend.grad import _Differentiable
from loom.runtime.executable import execute


@pytest.fixture(autouse=True)
def _float64():
    """The derivatives are checked in float64 (finite differences, tight tolerances): 64-bit
    values on in loom."""
    with loom.config.override(enable_x64=True):
        yield

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_second_order_through_while_with_data_dependent_trip_count():
    def mul(a, v):
        return lax.while_loop(lambda v: v < 100.0, lambda v: v * a, v)
    # v * a**4 for a=3, v=2: d2/da2 = 12 v a**2
    assert float(loom.grad(loom.grad(mul))(np.ones(()) * 3.0, np.ones(()) * 2.0)) == 216.0

    def newton_sqrt(a):
        def body(s):
            x, _ = s
            return 0.5 * (x + a / x), x
        return lax.while_loop(lambda s: lnp.abs(s[0] - s[1]) > 1e-12, body, (a, a * 0.0))[0]
    for a in (2.0, 5.0):
        g2 = loom.grad(loom.grad(newton_sqrt))(np.array(a))
        np.testing.assert_allclose(g2, -0.25 * a ** -1.5, rtol=1e-7)


def test_second_order_matches_jax_on_fixed_loops_and_conds():
    def program(m, lx):
        def f(x):
            y = lx.fori_loop(0, 3, lambda i, y: m.sin(y) * x + y * 0.1, x)
            y = lx.cond(y > 0.3, lambda y: m.sin(y) * y, lambda y: y ** 3, y)
            _, ys = lx.scan(lambda c, t: (c * m.cos(t) + x, c * t), y, m.arange(3.0) * x)
            return m.sum(ys) + y
        return f
    for x in (0.7, 0.2):
        got = loom.grad(loom.grad(program(lnp, lax)))(np.array(x))
        want = jax.grad(jax.grad(program(jnp, jax.lax)))(np.float32(x))
        np.testing.assert_allclose(got, want, rtol=2e-5)


def test_second_order_backward_program_round_trips_and_executors_agree():
    def f(a):
        return lax.while_loop(lambda v: v < 50.0, lambda v: v * a + lnp.sin(v), a)
    inner = loom.grad(f)
    traced, leaves, _ = _Differentiable(inner, False).prepare((np.array(1.5),), {}, (0,))
    text = lir.print(traced.module, generic=True)
    module = lir.parse(text)
    assert lir.print(module, generic=True) == text
    args = [*leaves, np.ones(())]
    a = execute(module, *args, executor="interpreter")
    b = execute(module, *args, executor="compiled")
    np.testing.assert_allclose(a[-1], b[-1], rtol=1e-12)
    eps = 1e-6
    fd = (float(inner(np.array(1.5 + eps))) - float(inner(np.array(1.5 - eps)))) / (2 * eps)
    np.testing.assert_allclose(b[-1], fd, rtol=1e-5)


# --- memory policies ---------------------------------------------------------------------------------


def _rnn(policy):
    def f(w, h0, n):
        def body(s):
            i, h = s
            return i + 1, lnp.tanh(w @ h + 0.1)
        _, h = lax.while_loop(lambda s: s[0] < n, body, (np.int32(0), h0), policy=policy)
        return lnp.sum(h * h)
    return f


POLICIES = ["save_all", "checkpoint", lax.Checkpoint(every=7), "checkpoint:3", "offload"]


@pytest.mark.parametrize("n", [0, 1, 5, 50])
def test_every_policy_gives_identical_gradients(n):
    rng = np.random.default_rng(n)
    w, h0 = rng.normal(size=(8, 8)) * 0.4, rng.normal(size=8)
    grads = [loom.grad(_rnn(p), (0, 1))(w, h0, np.int32(n)) for p in POLICIES]
    for g in grads[1:]:
        for a, b in zip(g, grads[0]):
            np.testing.assert_array_equal(a, b)
    with lax.checkpoint_policy("checkpoint"):
        g = loom.grad(_rnn(None), (0, 1))(w, h0, np.int32(n))
    for a, b in zip(g, grads[0]):
        np.testing.assert_array_equal(a, b)
    assert lax.saved_bytes() == 0


def _peak(policy, n):
    w, h0 = np.eye(16) * 0.5, np.ones(16)
    grad = loom.grad(_rnn(policy), (0, 1))
    lax.reset_saved_bytes()
    grad(w, h0, np.int32(n))
    return lax.peak_saved_bytes()


def test_checkpointing_saves_o_sqrt_n_bytes():
    sizes = [100, 400, 1600]
    save_all = [_peak("save_all", n) for n in sizes]
    ckpt = [_peak("checkpoint", n) for n in sizes]
    # save-all holds two 16-float64 vectors per iteration (h for w's cotangent, tanh's output for
    # its derivative); checkpointing a carry every sqrt(n) iterations plus one segment's residuals
    assert save_all == [n * 2 * 16 * 8 for n in sizes]
    for a, b in zip(ckpt, ckpt[1:]):
        assert 1.8 < b / a < 2.2  # n grows 4x, the saved bytes 2x
    assert ckpt[-1] < save_all[-1] / 20
    with lax.checkpoint_policy(lax.Checkpoint(every=40)):
        fixed = _peak(None, 1600)
    assert fixed < _peak(lax.Checkpoint(every=400), 1600)


def test_policy_is_recorded_on_the_loop_and_checked():
    text = loom.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2, x, policy="checkpoint:2")).lower(
        np.float32(1)).as_text(generic=True)
    assert 'loom.memory_policy = "checkpoint:2"' in text
    with pytest.raises(ValueError, match="unknown memory policy"):
        lax.while_loop(lambda v: v < 1, lambda v: v + 1, 0, policy="everything")
