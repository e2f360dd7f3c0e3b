"""Reverse-mode differentiation (loom.transforms.autodiff, loom.frontend.grad) against jax.grad /
jax.vjp and float64 central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom.frontend.grad import grad, value_and_grad, vjp
from loom.transforms import autodiff

# the derivatives are checked against float64 finite differences
pytestmark = pytest.mark.usefixtures("loom_x64")

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from support.gradient_cases import BASIC_CASES as CASES  # noqa: E402  (it imports jax)
from support.gradient_cases import ONEHOT, xent  # noqa: E402  (it imports jax)
from support.gradient_cases import case_inputs as _inputs  # noqa: E402


@pytest.mark.parametrize("name,fn,shapes,positive", CASES, ids=[c[0] for c in CASES])
def test_grad_matches_jax(name, fn, shapes, positive):
    args = _inputs(shapes, positive, np.float32)
    argnums = tuple(range(len(args)))
    ours = grad(lambda *a: fn(lnp, *a), argnums)(*args)
    # jitted: one XLA compile for the whole gradient instead of one per primitive (eager jax)
    theirs = jax.jit(jax.grad(lambda *a: fn(jnp, *a), argnums))(*args)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-4, atol=1e-5)


# Every third case; `max_ties` is left out: it is not differentiable at its tie (JAX's convention is
# checked against jax.grad above).
FD_CASES = [c for c in CASES[::3] if c[0] != "max_ties"]


@pytest.mark.parametrize("name,fn,shapes,positive", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_grad_matches_finite_differences(name, fn, shapes, positive):
    args = _inputs(shapes, positive, np.float64, seed=1)
    argnums = tuple(range(len(args)))
    f = loom.jit(lambda *a: fn(lnp, *a))
    ours = grad(lambda *a: fn(lnp, *a), argnums)(*args)
    rng = np.random.default_rng(2)
    eps = 1e-6
    for k, a in enumerate(args):
        assert ours[k].dtype == np.float64
        for _ in range(3):
            idx = tuple(int(rng.integers(0, d)) for d in a.shape)
            plus = [x.copy() for x in args]
            minus = [x.copy() for x in args]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            fd = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
            np.testing.assert_allclose(ours[k][idx], fd, rtol=1e-5, atol=1e-6)


def test_value_and_grad_and_argnums():
    x, y = _inputs([(3, 4), (4,)], False, np.float32)

    def f(x, y):
        return lnp.sum(lnp.tanh(x * y))

    value, (gx, gy) = value_and_grad(f, argnums=(0, 1))(x, y)
    jv, (jx, jy) = jax.value_and_grad(lambda x, y: jnp.sum(jnp.tanh(x * y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(value, jv, rtol=1e-5)
    np.testing.assert_allclose(gx, jx, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gy, jy, rtol=1e-4, atol=1e-6)
    g1 = grad(f, argnums=1)(x, y)
    np.testing.assert_allclose(g1, jy, rtol=1e-4, atol=1e-6)
    g_neg = grad(f, argnums=-1)(x, y)
    np.testing.assert_allclose(g_neg, jy, rtol=1e-4, atol=1e-6)


def test_has_aux():
    x = _inputs([(5,)], False, np.float32)[0]

    def f(x):
        s = lnp.sum(x ** 2)
        return s, {"mean": lnp.mean(x), "double": 2.0 * x}

    g, aux = grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(aux["mean"], x.mean(), rtol=1e-5)
    np.testing.assert_allclose(aux["double"], 2 * x, rtol=1e-6)
    (value, aux2), g2 = value_and_grad(f, has_aux=True)(x)
    np.testing.assert_allclose(value, np.sum(x ** 2), rtol=1e-5)
    np.testing.assert_allclose(g2, g, rtol=1e-6)
    assert set(aux2) == {"mean", "double"}


def test_pytree_params():
    rng = np.random.default_rng(3)
    params = {"w1": rng.normal(size=(4, 6)).astype(np.float32), "b1": np.zeros(6, np.float32),
              "layers": [rng.normal(size=(6, 2)).astype(np.float32), (np.ones(2, np.float32),)]}
    x = rng.normal(size=(5, 4)).astype(np.float32)

    def loss(m, p, x):
        h = m.tanh(x @ p["w1"] + p["b1"])
        w2, (b2,) = p["layers"]
        return m.mean((h @ w2 + b2) ** 2)

    ours = grad(lambda p, x: loss(lnp, p, x))(params, x)
    theirs = jax.grad(lambda p, x: loss(jnp, p, x))(params, x)
    assert set(ours) == {"w1", "b1", "layers"}
    np.testing.assert_allclose(ours["w1"], theirs["w1"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours["b1"], theirs["b1"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours["layers"][0], theirs["layers"][0], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours["layers"][1][0], theirs["layers"][1][0], rtol=1e-4, atol=1e-6)


def test_vjp_non_scalar_output():
    x, y = _inputs([(3, 4), (4, 2)], False, np.float32)

    def f(m, x, y):
        return m.tanh(x @ y), m.sin(x)

    out, fn = vjp(lambda x, y: f(lnp, x, y), x, y)
    jout, jfn = jax.vjp(lambda x, y: f(jnp, x, y), x, y)
    for o, t in zip(out, jout):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
    ct = tuple(np.asarray(c) for c in _inputs([(3, 2), (3, 4)], False, np.float32, seed=7))
    for o, t in zip(fn(ct), jfn(ct)):
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5)


def test_vjp_has_aux_and_int_primal():
    x = _inputs([(4,)], False, np.float32)[0]
    n = np.arange(4, dtype=np.int32)
    out, fn, aux = vjp(lambda x, n: (x * n.astype(np.float32), lnp.sum(n)), x, n, has_aux=True)
    np.testing.assert_allclose(out, x * n)
    assert int(aux) == 6
    gx, gn = fn(np.ones(4, np.float32))
    np.testing.assert_allclose(gx, n.astype(np.float32))
    assert not np.any(gn)


def test_grad_of_int_argument_raises_like_jax():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda n: jnp.sum(n * 1.0))(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        grad(lambda n: lnp.sum(n * 1.0))(np.arange(3, dtype=np.int32))


def test_grad_of_non_scalar_output_raises():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        grad(lambda x: x * 2.0)(np.ones(3, np.float32))


def test_missing_rule_names_op_and_transformation(monkeypatch):
    monkeypatch.delitem(autodiff.VJP_RULES, "stablehlo.sine")
    with pytest.raises(autodiff.MissingRuleError, match=r"vjp.*stablehlo\.sine"):
        grad(lambda x: lnp.sum(lnp.sin(x)))(np.ones(3, np.float32))


def test_transformed_module_round_trips():
    x, w = _inputs([(5, 4), (4, 3)], False, np.float32)
    lowered = loom.jit(lambda w, x: xent(lnp, w, x, ONEHOT)).lower(w, x[:, :4])
    module = autodiff.vjp_module(lowered.module, wrt=[0, 1])
    module.verify()
    for generic in (False, True):
        text = lir.print(module, generic=generic)
        again = lir.parse(text)
        again.verify()
        assert lir.print(again, generic=generic) == text
    loss, gw, gx, = loom.execute(module, w, x, np.float32(1.0))
    jl, (jw, jx) = jax.value_and_grad(lambda w, x: xent(jnp, w, x, ONEHOT), (0, 1))(w, x)
    np.testing.assert_allclose(loss, jl, rtol=1e-5)
    np.testing.assert_allclose(gw, jw, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gx, jx, rtol=1e-4, atol=1e-6)


def test_composes_with_jit_and_grad_of_grad():
    x = _inputs([(6,)], False, np.float32)[0]

    def f(m, x):
        return m.sum(m.sin(x) * m.tanh(x))

    jitted = loom.jit(grad(lambda x: f(lnp, x)))
    np.testing.assert_allclose(jitted(x), jax.grad(lambda x: f(jnp, x))(x), rtol=1e-4, atol=1e-6)
    assert "stablehlo.cosine" in jitted.lower(x).as_text()
    second = grad(lambda x: lnp.sum(grad(lambda y: f(lnp, y))(x)))(x)
    jsecond = jax.grad(lambda x: jnp.sum(jax.grad(lambda y: f(jnp, y))(x)))(x)
    np.testing.assert_allclose(second, jsecond, rtol=1e-4, atol=1e-5)


def test_sgd_step_reduces_loss():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32))[:, None]
    params = {"w": np.zeros((3, 1), np.float32), "b": np.zeros(1, np.float32)}

    def loss(p, x, y):
        return lnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    step = value_and_grad(loss)
    first = None
    for _ in range(50):
        value, g = step(params, x, y)
        first = value if first is None else first
        params = {k: params[k] - 0.1 * g[k] for k in params}
    assert float(value) < 0.01 * float(first)


def _raw(fn):
    """A loom.numpy-level function applying a StableHLO builder `fn(builder, *values)` to tracers."""
    from loom.frontend.tracing import Tracer

    def apply(*xs):
        return Tracer(fn(xs[0].trace.emit(), *(x.value for x in xs)), xs[0].trace)
    return apply


RAW_CASES = [
    ("logistic", lambda b, x: stablehlo_mod().logistic(b, x), jax.nn.sigmoid, [(3, 4)], False),
    ("log_plus_one", lambda b, x: stablehlo_mod().log_plus_one(b, x), jnp.log1p, [(3, 4)], True),
    ("exponential_minus_one", lambda b, x: stablehlo_mod().exponential_minus_one(b, x), jnp.expm1, [(5,)], False),
    ("rsqrt", lambda b, x: stablehlo_mod().rsqrt(b, x), jax.lax.rsqrt, [(5,)], True),
    ("broadcast_permuted", lambda b, x: stablehlo_mod().broadcast_in_dim(b, x, (2, 4, 5, 3), (3, 0, 2)),
     lambda x: jax.lax.broadcast_in_dim(jnp.transpose(x, (1, 2, 0)), (2, 4, 5, 3), (0, 2, 3)), [(3, 2, 1)], False),
    ("pad", lambda b, x: stablehlo_mod().pad(b, x, _zero(b), (1, 0), (2, 1), (1, 0)),
     lambda x: jax.lax.pad(x, 0.0, ((1, 2, 1), (0, 1, 0))), [(3, 4)], False),
    ("dot_general_batch_contract", lambda b, x, y: stablehlo_mod().dot_general(
        b, x, y, _dot_numbers((1,), (0,), (3, 0), (1, 2))),
     lambda x, y: jax.lax.dot_general(x, y, (((3, 0), (1, 2)), ((1,), (0,)))), [(2, 3, 4, 5), (3, 5, 2, 6)], False),
    ("reverse", lambda b, x: stablehlo_mod().reverse(b, x, (0, 1)), lambda x: jax.lax.rev(x, (0, 1)), [(3, 4)],
     False),
]


def stablehlo_mod():
    from loom.dialects import stablehlo
    return stablehlo


def _zero(b):
    from loom.ir.types import FloatType, RankedTensorType
    return autodiff.full(b, 0.0, RankedTensorType((), FloatType("f32"), None))


def _dot_numbers(lhs_batch, rhs_batch, lhs_contract, rhs_contract):
    from loom.dialects.stablehlo import DotDimensionNumbers
    return DotDimensionNumbers.get(lhs_batching_dimensions=lhs_batch, rhs_batching_dimensions=rhs_batch,
                                   lhs_contracting_dimensions=lhs_contract, rhs_contracting_dimensions=rhs_contract)


@pytest.mark.parametrize("name,build,jax_fn,shapes,positive", RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_op_rules_match_jax_vjp(name, build, jax_fn, shapes, positive):
    args = _inputs(shapes, positive, np.float32, seed=5)
    out, fn = vjp(_raw(build), *args)
    jout, jfn = jax.vjp(jax_fn, *args)
    np.testing.assert_allclose(out, jout, rtol=1e-5, atol=1e-6)
    ct = _inputs([np.shape(jout)], False, np.float32, seed=6)[0]
    for o, t in zip(fn(ct), jfn(ct)):
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5)


def test_ties_split_like_jax():
    x = np.array([[1.0, 3.0, 3.0], [0.0, -1.0, 0.0]], np.float32)
    for lf, jf in [(lambda x: lnp.max(x), lambda x: jnp.max(x)),
                   (lambda x: lnp.sum(lnp.min(x, axis=1)), lambda x: jnp.sum(jnp.min(x, axis=1))),
                   (lambda x: lnp.sum(lnp.maximum(x, 0.0)), lambda x: jnp.sum(jnp.maximum(x, 0.0))),
                   (lambda x: lnp.sum(lnp.minimum(x, 3.0)), lambda x: jnp.sum(jnp.minimum(x, 3.0)))]:
        np.testing.assert_allclose(grad(lf)(x), jax.grad(jf)(x), rtol=1e-6)
