"""`loom.numpy.linalg.norm` against `jax.numpy.linalg.norm`: values for every supported ord and
axis form (eagerly and under jit), gradients, and clear errors for the SVD-based norms."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402

rng = np.random.default_rng(11)
X = rng.standard_normal((3, 4, 5)).astype(np.float32)
X[0, 0, :2] = 0.0

CASES = [
    dict(), dict(keepdims=True), dict(axis=1), dict(axis=-1, ord=1), dict(axis=0, ord=np.inf),
    dict(axis=2, ord=-np.inf), dict(axis=2, ord=0), dict(axis=1, ord=3), dict(axis=1, ord=0.5, keepdims=True),
    dict(axis=(1, 2)), dict(axis=(2, 0), ord="fro"), dict(axis=(1, 2), ord=1), dict(axis=(1, 2), ord=-1),
    dict(axis=(0, 1), ord=np.inf, keepdims=True), dict(axis=(1, 2), ord=-np.inf),
]


@pytest.mark.parametrize("kw", CASES, ids=repr)
def test_norm_matches_jax(kw):
    want = np.asarray(jnp.linalg.norm(X, **kw))
    for got in (lnp.linalg.norm(X, **kw), loom.jit(lambda x: lnp.linalg.norm(x, **kw))(X)):
        assert np.shape(got) == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("x, kw", [(X[0, 0], dict(ord=1)), (X[0, 0], dict(ord=np.inf)), (X[0], dict(ord=1)),
                                   (X[0], dict(ord=-np.inf)), (X[0], dict()), (X[1, 1], dict(ord=3))], ids=repr)
def test_norm_of_vectors_and_matrices_with_ord(x, kw):
    np.testing.assert_allclose(np.asarray(lnp.linalg.norm(x, **kw)), np.asarray(jnp.linalg.norm(x, **kw)), rtol=2e-6)


@pytest.mark.parametrize("kw", [dict(), dict(axis=1, ord=3), dict(axis=(1, 2), ord=1), dict(axis=-1, ord=np.inf)],
                         ids=repr)
def test_norm_gradients_match_jax(kw):
    x = X + 0.5  # no zeros: the 2-norm's derivative is nan at 0 in both
    got = loom.grad(lambda x: lnp.sum(lnp.linalg.norm(x, **kw)))(x)
    want = jax.grad(lambda x: jnp.sum(jnp.linalg.norm(x, **kw)))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_integer_input_and_errors():
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_allclose(lnp.linalg.norm(i), np.asarray(jnp.linalg.norm(i)), rtol=1e-6)
    assert lnp.linalg.norm(i).dtype == jnp.linalg.norm(i).dtype
    for ord_ in (2, -2, "nuc"):  # the singular-value norms, traced and on plain arrays
        want = np.asarray(jnp.linalg.norm(X, ord=ord_, axis=(1, 2)))
        np.testing.assert_allclose(np.asarray(loom.jit(lambda x, o=ord_: lnp.linalg.norm(x, ord=o, axis=(1, 2)))(X)),
                                   want, rtol=2e-5)
        np.testing.assert_allclose(np.asarray(lnp.linalg.norm(X, ord=ord_, axis=(1, 2))), want, rtol=2e-5)
    with pytest.raises(ValueError, match="an ord needs axis"):
        lnp.linalg.norm(X, ord=1)
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        lnp.linalg.norm(X, axis=3)
