"""bfloat16 through loom.lax and loom.nn, against JAX on the same inputs: dtypes exactly, values
within bf16 rounding, gradients (stop_gradient must stop them for bf16 as for float32)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom import lax, nn

BF16 = ml_dtypes.bfloat16
RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 6)).astype(BF16)


def check(loom_out, jax_out):
    loom_out, jax_out = np.asarray(loom_out), np.asarray(jax_out)
    assert loom_out.dtype == jax_out.dtype
    np.testing.assert_allclose(loom_out.astype(np.float32), jax_out.astype(np.float32), rtol=2 ** -6, atol=2 ** -6)


@pytest.mark.parametrize("name,loom_fn,jax_fn", [
    ("sin", lambda x: lax.sin(x), lambda x: jax.lax.sin(x)),
    ("exp", lambda x: lax.exp(x), lambda x: jax.lax.exp(x)),
    ("max", lambda x: lax.max(x, lax.neg(x)), lambda x: jax.lax.max(x, jax.lax.neg(x))),
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), lambda x: jax.lax.reduce_max(x, (1,))),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,)), lambda x: jax.lax.reduce_min(x, (0,))),
    ("sort", lambda x: lax.sort(x, dimension=1), lambda x: jax.lax.sort(x, dimension=1)),
    ("softmax", lambda x: nn.softmax(x), lambda x: jax.nn.softmax(x)),
    ("log_softmax", lambda x: nn.log_softmax(x), lambda x: jax.nn.log_softmax(x)),
    ("gelu", lambda x: nn.gelu(x), lambda x: jax.nn.gelu(x)),
    ("relu", lambda x: nn.relu(x), lambda x: jax.nn.relu(x)),
])
def test_bf16_ops_against_jax(name, loom_fn, jax_fn):
    check(loom.jit(loom_fn)(X), jax.jit(jax_fn)(jnp.asarray(X)))


def test_stop_gradient_stops_bf16_gradients():
    def f(mod):
        def fn(x):
            return (x * mod.stop_gradient(x) + x).astype(np.float32).sum()
        return fn
    g_loom = loom.grad(f(lax))(X)
    g_jax = jax.grad(f(jax.lax))(jnp.asarray(X))
    check(g_loom, g_jax)
    # through stop_gradient only the outer factor differentiates: d/dx (x * c + x) = c + 1
    np.testing.assert_allclose(np.asarray(g_loom, np.float32), X.astype(np.float32) + 1, rtol=2 ** -7, atol=2 ** -7)


def test_bf16_softmax_gradient_against_jax():
    w = RNG.standard_normal((6,)).astype(BF16)
    g_loom = loom.grad(lambda x: (nn.softmax(x) * lnp.asarray(w)).astype(np.float32).sum())(X)
    g_jax = jax.grad(lambda x: (jax.nn.softmax(x) * jnp.asarray(w)).astype(jnp.float32).sum())(jnp.asarray(X))
    check(g_loom, g_jax)
