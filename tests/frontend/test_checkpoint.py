"""loom.checkpoint / loom.remat: gradients equal the un-checkpointed ones and jax.checkpoint's, and
the differentiated IR recomputes the checkpointed ops instead of keeping their results."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom.frontend.checkpoint import checkpoint, checkpoint_policies, remat
from loom.frontend.grad import _Differentiable

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

X = np.linspace(-1.0, 1.0, 6).astype(np.float32)
W = np.linspace(0.5, 1.5, 6).astype(np.float32)
M = np.linspace(-0.5, 0.5, 36).reshape(6, 6).astype(np.float32)


def _body(m):
    return lambda v: m.sin(m.sin(m.sin(v) * W))


def _loss(wrap, m=lnp):
    return lambda v: m.sum(wrap(_body(m))(v) ** 2)


def _grad_module(f, *args):
    traced, _, _ = _Differentiable(f, False).prepare(args, {}, tuple(range(len(args))))
    return traced.module


def test_gradient_equals_the_uncheckpointed_one_and_jax():
    plain = loom.grad(_loss(lambda f: f))(X)
    ours = loom.grad(_loss(checkpoint))(X)
    theirs = jax.grad(_loss(jax.checkpoint, jnp))(X)
    np.testing.assert_allclose(ours, plain, rtol=1e-6)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-5, atol=1e-6)
    assert remat is checkpoint


def test_the_backward_pass_recomputes_instead_of_saving():
    plain = str(_grad_module(_loss(lambda f: f), X))
    remat_text = str(_grad_module(_loss(checkpoint), X))
    # forward: 3 sines; the backward needs the inputs of the outer two, recomputed behind a barrier
    assert plain.count("stablehlo.sine") == 3
    assert remat_text.count("stablehlo.sine") == 5
    assert remat_text.count("stablehlo.optimization_barrier") == 3


def test_no_intermediate_of_the_checkpointed_function_is_used_after_it():
    module = _grad_module(_loss(checkpoint), X)
    ops = list(module.regions[0].entry.first_op.regions[0].entry.ops)
    start = next(i for i, op in enumerate(ops) if "loom.remat_start" in op.attributes)
    end = next(i for i, op in enumerate(ops) if "loom.remat_end" in op.attributes)
    inside = {id(op) for op in ops[start + 1:end]}
    assert inside
    for op in ops[start + 1:end]:
        for r in op.results:
            for user in r.users:
                assert id(user) in inside or user is ops[end], f"{op.name} is saved for {user.name}"


def test_closure_values_receive_their_gradient():
    def loss(m, wrap):
        return lambda v, u: m.sum(wrap(lambda a: m.tanh(a * u + m.sin(u)))(v) * u)
    ours = loom.grad(loss(lnp, checkpoint), (0, 1))(X, W)
    theirs = jax.grad(loss(jnp, jax.checkpoint), (0, 1))(X, W)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("policy", [None, checkpoint_policies.dots_saveable, checkpoint_policies.everything_saveable],
                         ids=["nothing_saveable", "dots_saveable", "everything_saveable"])
def test_nested_second_order_and_policies(policy):
    inner = checkpoint(lambda a: lnp.sin(a) * 2.0)
    outer = checkpoint(lambda a: inner(lnp.cos(a)) @ M, policy=policy)

    def ref(a):
        return (jnp.sin(jnp.cos(a)) * 2.0) @ M
    ours = loom.grad(lambda v: lnp.sum(loom.grad(lambda u: lnp.sum(outer(u) ** 2))(v) ** 2))(X)
    theirs = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.sum(ref(u) ** 2))(v) ** 2))(X)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-4)


def test_dots_saveable_keeps_the_dot_and_recomputes_the_rest():
    f = checkpoint(lambda a: lnp.sin(lnp.tanh(a) @ M) @ M, policy=checkpoint_policies.dots_saveable)
    text = str(_grad_module(lambda v: lnp.sum(f(v) ** 2), X))
    g = checkpoint(lambda a: lnp.sin(lnp.tanh(a) @ M) @ M)
    text_all = str(_grad_module(lambda v: lnp.sum(g(v) ** 2), X))
    assert text.count("stablehlo.dot_general") < text_all.count("stablehlo.dot_general")
    np.testing.assert_allclose(loom.grad(lambda v: lnp.sum(f(v) ** 2))(X),
                               loom.grad(lambda v: lnp.sum(g(v) ** 2))(X), rtol=1e-5)


def test_other_transformations_see_an_identity():
    f = checkpoint(_body(lnp))
    np.testing.assert_allclose(loom.jit(f)(X), _body(np)(X), rtol=1e-6)
    np.testing.assert_allclose(f(X), _body(np)(X), rtol=1e-6)
    np.testing.assert_allclose(loom.jvp(f, (X,), (W,))[1], np.asarray(jax.jvp(_body(jnp), (X,), (W,))[1]),
                               rtol=1e-5)
    xs = np.stack([X, W])
    np.testing.assert_allclose(loom.vmap(loom.grad(_loss(checkpoint)))(xs),
                               np.asarray(jax.vmap(jax.grad(_loss(jax.checkpoint, jnp)))(xs)), rtol=1e-5, atol=1e-6)


def test_pytree_arguments_and_outputs():
    @checkpoint
    def f(d, scale):
        return {"a": lnp.sin(d["x"]) * scale, "b": (d["x"] * d["y"], 3)}

    def loss(x, y):
        out = f({"x": x, "y": y}, 2.0)
        return lnp.sum(out["a"] ** 2) + lnp.sum(out["b"][0]) * out["b"][1]
    ours = loom.grad(loss, (0, 1))(X, W)
    theirs = jax.grad(lambda x, y: jnp.sum((jnp.sin(x) * 2.0) ** 2) + jnp.sum(x * y) * 3, (0, 1))(X, W)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_and_jit_of_grad():
    xs = np.stack([X, W])
    f = checkpoint(lambda v: lnp.sin(lnp.sin(v) * 2.0))

    def ref(v):
        return jnp.sum(jax.vmap(lambda u: jnp.sin(jnp.sin(u) * 2.0))(v) ** 2)
    expected = np.asarray(jax.grad(ref)(xs))
    np.testing.assert_allclose(loom.grad(lambda v: lnp.sum(loom.vmap(f)(v) ** 2))(xs), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loom.jit(loom.grad(lambda v: lnp.sum(f(v) ** 2)))(xs), expected, rtol=1e-5, atol=1e-6)
