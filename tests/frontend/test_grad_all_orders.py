"""Every function of the gradient suites (tests/support/gradient_cases.py, built from
loom.numpy) checked in float64: first-order gradients against central finite differences, and
second order (Hessian-vector products, reverse over reverse) against JAX."""

from __future__ import annotations

import numpy as np
import pytest
from support.gradient_cases import SUITES
from support.gradient_cases import case_inputs as _inputs

import loom
import loom.numpy as lnp


@pytest.fixture(autouse=True)
def _float64():
    """The derivatives are checked in float64 (finite differences, tight tolerances): 64-bit
    values on in loom."""
    with loom.config.override(enable_x64=True):
        yield

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

def _lax(m):
    return loom.lax if m is lnp else jax.lax


def _nn(m):
    return loom.nn if m is lnp else jax.nn


def _softmax(m, x, axis=-1):
    e = m.exp(x - m.max(x, axis=axis, keepdims=True))
    return e / m.sum(e, axis=axis, keepdims=True)


_ROWS = np.array([2, 0, 2, 1])
_COLS = np.array([[1, 0], [3, 3], [2, 0]])
_LABELS = np.array([1, 3, 0])

# More functions, composed the way models use loom.numpy, loom.nn and loom.lax.
EXTRA_CASES = [
    ("softplus", lambda m, x: m.sum(m.logaddexp(x, 0.0)), [(3, 4)], False),
    ("logsumexp_axis0", lambda m, x: m.sum(m.log(m.sum(m.exp(x), axis=0))), [(3, 4)], False),
    ("softmax_entropy", lambda m, x: -m.sum(_softmax(m, x) * m.log(_softmax(m, x))), [(3, 4)], False),
    ("gelu_tanh", lambda m, x: m.sum(0.5 * x * (1 + m.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))), [(6,)],
     False),
    ("silu", lambda m, x: m.sum(x / (1 + m.exp(-x))), [(6,)], False),
    ("elu", lambda m, x: m.sum(m.where(x > 0, x, m.exp(x) - 1) ** 2), [(3, 4)], False),
    ("huber", lambda m, x: m.sum(m.where(m.abs(x) < 1, 0.5 * x * x, m.abs(x) - 0.5)), [(3, 4)], False),
    ("cosine_similarity", lambda m, x, y: m.sum(x * y) / m.sqrt(m.sum(x * x) * m.sum(y * y)), [(5,), (5,)], False),
    ("rbf_kernel", lambda m, x, y: m.sum(m.exp(-m.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1))),
     [(3, 2), (4, 2)], False),
    ("attention", lambda m, q, k, v: m.sum(_softmax(m, q @ k.T / 2.0) @ v), [(3, 4), (5, 4), (5, 2)], False),
    ("rms_norm", lambda m, x: m.sum(m.sin(x / m.sqrt(m.mean(x * x, axis=-1, keepdims=True) + 1e-6))), [(3, 4)],
     False),
    ("gather_rows", lambda m, x: m.sum(m.sin(x[_ROWS])), [(3, 4)], False),
    ("gather_pairs", lambda m, x: m.sum(x[np.array([0, 2]), np.array([1, 3])] ** 2), [(3, 4)], False),
    ("at_set", lambda m, x, y: m.sum(m.tanh(x.at[1].set(y * 2.0)) * x), [(3, 4), (4,)], False),
    ("at_add_duplicates", lambda m, x, y: m.sum(m.tanh(x.at[np.array([0, 0, 2])].add(y))), [(3, 4), (3, 4)], False),
    ("at_mul", lambda m, x: m.sum(x.at[:, 1].multiply(x[:, 2]) ** 2), [(3, 4)], False),
    ("take_along_axis", lambda m, x: m.sum(m.take_along_axis(x, _COLS, axis=1) ** 3), [(3, 4)], False),
    ("dynamic_slice", lambda m, x: m.sum(m.sin(_lax(m).dynamic_slice(x, (1, 1), (2, 3)))), [(3, 4)], False),
    ("dynamic_update_slice", lambda m, x, y: m.sum(m.cos(_lax(m).dynamic_update_slice(x, y * y, (1, 0)))),
     [(3, 4), (2, 4)], False),
    ("cond_taken", lambda m, x: _lax(m).cond(m.sum(x) > -100.0, lambda x: m.sum(m.sin(x)),
                                             lambda x: m.sum(m.cos(x)), x), [(3, 4)], False),
    ("cond_on_data", lambda m, x: _lax(m).cond(x[0] > 0, lambda x: m.sum(x ** 3), lambda x: m.sum(m.exp(x)), x),
     [(5,)], False),
    ("switch", lambda m, x: _lax(m).switch(1, [lambda x: m.sum(x), lambda x: m.sum(m.tanh(x) ** 2),
                                              lambda x: m.sum(m.sin(x))], x), [(3, 4)], False),
    ("fori_loop", lambda m, x: m.sum(_lax(m).fori_loop(0, 5, lambda i, c: m.tanh(c) * 1.1 + 0.1 * x, x)), [(4,)],
     False),
    ("scan_decay", lambda m, x: m.sum(_lax(m).scan(lambda c, xi: (0.9 * c + xi, m.sin(c) * xi), x[0], x)[1]),
     [(5, 3)], False),
    ("scan_rnn", lambda m, w, xs: m.sum(_lax(m).scan(lambda h, xi: (m.tanh(w @ h + xi), m.tanh(w @ h + xi)),
                                                      xs[0], xs)[1] ** 2), [(3, 3), (5, 3)], False),
    ("scan_reverse", lambda m, x: _lax(m).scan(lambda c, xi: (c * m.cos(xi) + xi, None), x[0, 0], x[:, 0],
                                               reverse=True)[0], [(6, 2)], False),
    ("matmul_chain", lambda m, x, y: m.sum(m.tanh(x @ y) @ x), [(3, 4), (4, 3)], False),
    ("einsum_bilinear", lambda m, a, b, c: m.einsum("i,ij,j->", a, b, c), [(3,), (3, 4), (4,)], False),
    ("outer_sin", lambda m, a, b: m.sum(m.sin(m.outer(a, b))), [(3,), (4,)], False),
    ("batched_outer", lambda m, x, y: m.sum((x[:, None, :, None] * y[None, :, None, :]) ** 2), [(2, 3), (2, 2)],
     False),
    ("cumsum_exp", lambda m, x: m.sum(m.exp(m.cumsum(x * 0.1, axis=1))), [(3, 4)], False),
    ("cumprod_rows", lambda m, x: m.sum(m.cumprod(x, axis=0)), [(3, 4)], True),
    ("sort_weighted", lambda m, x: m.sum(m.sort(x, axis=1) * m.arange(4.0)), [(3, 4)], False),
    ("largest_two", lambda m, x: m.sum(m.sort(x)[-2:] ** 2), [(6,)], False),
    ("max_axis", lambda m, x: m.sum(m.max(x, axis=1) ** 2), [(3, 4)], False),
    ("min_keepdims", lambda m, x: m.sum((x - m.min(x, axis=0, keepdims=True)) ** 2), [(3, 4)], False),
    ("prod_axis", lambda m, x: m.sum(m.prod(x, axis=1)), [(3, 4)], True),
    ("var_axis", lambda m, x: m.sum(m.var(x, axis=0)), [(3, 4)], False),
    ("norm", lambda m, x: m.sqrt(m.sum(x * x)), [(3, 4)], False),
    ("clip_times", lambda m, x: m.sum(m.clip(x, -0.5, 0.5) * x), [(3, 4)], False),
    ("where_pieces", lambda m, x: m.sum(m.where(x > 0, x ** 2, -x ** 3)), [(3, 4)], False),
    ("abs_pow", lambda m, x: m.sum(m.abs(x) ** 1.5), [(3, 4)], False),
    ("power_xy", lambda m, x, y: m.sum(x ** y), [(3,), (3,)], True),
    ("arctan", lambda m, x: m.sum(m.arctan(x)), [(6,)], False),
    ("arcsinh", lambda m, x: m.sum(m.arcsinh(x)), [(6,)], False),
    ("log1p_exp", lambda m, x: m.sum(m.log1p(m.exp(x))), [(6,)], False),
    ("expm1", lambda m, x: m.sum(m.expm1(x)), [(6,)], False),
    ("hypot", lambda m, x, y: m.sum(m.hypot(x, y)), [(4,), (4,)], False),
    ("sinh_cosh", lambda m, x, y: m.sum(m.sinh(x) * m.cosh(y)), [(4,), (4,)], False),
    ("tan", lambda m, x: m.sum(m.tan(0.3 * x)), [(6,)], False),
    ("rational", lambda m, x: m.sum(1 / (1 + x * x)), [(6,)], False),
    ("gram", lambda m, x: m.sum((x.T @ x) ** 2), [(3, 4)], False),
    ("stack_concatenate", lambda m, x, y: m.sum(m.concatenate([m.stack([x, y], 0), x[None]], 0) ** 3),
     [(3,), (3,)], False),
    ("pad_weighted", lambda m, x: m.sum(m.pad(x, ((1, 0), (0, 2))) ** 2 * m.arange(24.0).reshape(4, 6)), [(3, 4)],
     False),
    ("flip_roll", lambda m, x: m.sum(m.flip(x, 0) * m.roll(x, 1, axis=1)), [(3, 4)], False),
    ("repeat_tile", lambda m, x: m.sum(m.tile(m.repeat(x, 2, axis=0), (1, 2)) ** 2 * x[0, 0]), [(3, 4)], False),
    ("reshape_swapaxes", lambda m, x: m.sum(m.sin(m.swapaxes(m.reshape(x, (2, 6)), 0, 1)) @ m.ones(2)), [(3, 4)],
     False),
    ("broadcast_to", lambda m, x: m.sum(m.broadcast_to(x, (2, 3, 4)) * m.arange(24.0).reshape(2, 3, 4)), [(3, 4)],
     False),
    ("expand_squeeze", lambda m, x: m.sum(m.squeeze(m.expand_dims(x, 0), 0) ** 3), [(3, 4)], False),
    ("split_product", lambda m, x: m.sum(m.split(x, 2, axis=1)[0] * m.split(x, 2, axis=1)[1]), [(3, 4)], False),
    ("moveaxis", lambda m, x: m.sum(m.moveaxis(m.sin(x)[None], 0, 2) ** 2), [(3, 4)], False),
    ("one_hot_cross_entropy", lambda m, x: -m.sum(_nn(m).one_hot(_LABELS, 4) * _nn(m).log_softmax(x)), [(3, 4)],
     False),
    ("nn_activations", lambda m, x: m.sum(_nn(m).gelu(x) * _nn(m).sigmoid(x) + _nn(m).silu(x)), [(3, 4)], False),
]

# Not differentiable where the suites evaluate them: ties on purpose (JAX's convention at the tie is
# checked against jax.grad in the suites).
_KINKED = {"max_ties"}


def _cases() -> list[tuple]:
    cases = [(f"{suite}:{c[0]}", c[1], c[2], c[3]) for suite, rows in SUITES.items() for c in rows
             if c[0] not in _KINKED]
    return cases + EXTRA_CASES


CASES = _cases()


def test_the_suites_cover_at_least_150_functions():
    assert len(CASES) >= 150


@pytest.mark.parametrize("name,fn,shapes,positive", CASES, ids=[c[0] for c in CASES])
def test_grad_matches_finite_differences(name, fn, shapes, positive):
    args = _inputs(shapes, positive, seed=3)
    argnums = tuple(range(len(args)))
    f = loom.jit(lambda *a: fn(lnp, *a))
    ours = loom.grad(lambda *a: fn(lnp, *a), argnums)(*args)
    rng = np.random.default_rng(4)
    # A random direction per argument: d/dt f(x + t v) at t = 0 against <grad, v>.
    directions = [rng.normal(size=a.shape) for a in args]
    eps = 1e-6
    plus = [a + eps * v for a, v in zip(args, directions)]
    minus = [a - eps * v for a, v in zip(args, directions)]
    fd = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
    directional = sum(float(np.sum(g * v)) for g, v in zip(ours, directions))
    assert all(g.dtype == np.float64 for g in ours)
    np.testing.assert_allclose(directional, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,fn,shapes,positive", CASES, ids=[c[0] for c in CASES])
def test_second_order_matches_jax(name, fn, shapes, positive):
    args = _inputs(shapes, positive, seed=5)
    rng = np.random.default_rng(6)
    v = rng.normal(size=args[0].shape)

    def hvp(m, grad):  # d/dx0 <grad_x0 f(x), v>: one row block of the Hessian times v
        return grad(lambda *a: m.sum(grad(lambda *b: fn(m, *b))(*a) * v))

    ours = hvp(lnp, loom.grad)(*args)
    with jax.enable_x64(True):
        theirs = np.asarray(jax.jit(hvp(jnp, jax.grad))(*args))
    assert ours.shape == theirs.shape and ours.dtype == np.float64
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)
