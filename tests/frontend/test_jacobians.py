"""`loom.jacfwd`, `loom.jacrev` and `loom.hessian` against JAX's on the same Python source
(loom.numpy for jax.numpy): pytree inputs and outputs, `argnums` an int or a tuple, `has_aux`,
scalar and matrix shapes, eagerly and under `jit` and `vmap`."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402

rng = np.random.default_rng(5)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(got, want, rtol=2e-5):
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert g_tree == w_tree
    for g, w in zip(g_leaves, w_leaves):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5)


FUNCTIONS = {
    "vector_to_vector": (lambda m: lambda x, y: m.tanh(x) * y.sum(), lambda: (rand(4), rand(3))),
    "matrix_to_scalar": (lambda m: lambda x, y: (m.sin(x @ y) ** 2).sum(), lambda: (rand(2, 3), rand(3, 2))),
    "scalar_to_matrix": (lambda m: lambda x, y: m.outer(y, y) * m.exp(x), lambda: (np.float32(0.3), rand(3))),
    "pytrees": (lambda m: lambda p, y: {"u": m.sin(p["a"]) * y[0], "v": (p["a"] ** 2 * p["b"], y ** 3)},
                lambda: ({"a": rand(3), "b": np.float32(1.5)}, rand(2))),
}


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)], ids=lambda a: f"argnums={a}")
@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_jacobian_matches_jax(mode, name, argnums):
    build, args = FUNCTIONS[name]
    args = args()
    # jitted: one XLA compile for the whole Jacobian instead of one per primitive (eager jax)
    want = jax.jit(getattr(jax, mode)(build(jnp), argnums=argnums))(*args)
    close(getattr(loom, mode)(build(lnp), argnums=argnums)(*args), want)
    close(loom.jit(getattr(loom, mode)(build(lnp), argnums=argnums))(*args), want)


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev", "hessian"])
def test_has_aux(mode):
    def f(m):
        return lambda x: ((m.sin(x) * x).sum(), {"norm": (x * x).sum()})
    x = rand(4)
    got, aux = getattr(loom, mode)(f(lnp), has_aux=True)(x)
    want, want_aux = getattr(jax, mode)(f(jnp), has_aux=True)(x)
    close(got, want)
    close(aux, want_aux)


def test_hessian_matches_jax_and_composes_with_vmap():
    def f(m):
        return lambda x, y: (m.log1p(m.exp(x @ y)) * x.sum()).sum()
    x, y = rand(2, 3), rand(3)
    close(loom.hessian(f(lnp), argnums=(0, 1))(x, y), jax.hessian(f(jnp), argnums=(0, 1))(x, y))
    xs = rand(4, 2, 3)
    close(loom.vmap(loom.hessian(f(lnp)), in_axes=(0, None))(xs, y),
          jax.vmap(jax.hessian(f(jnp)), in_axes=(0, None))(xs, y))


def test_integer_inputs_are_an_error_as_in_jax():
    with pytest.raises(TypeError, match="jacrev requires real-valued inputs"):
        loom.jacrev(lambda x: x * 2)(np.arange(3))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        loom.jacfwd(lambda x: x * 2)(np.arange(3))
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        loom.jacrev(lambda x, y: x * y, argnums=2)(rand(2), rand(2))
