"""Forward-mode differentiation (loom.transforms.forward_ad, loom.frontend.jvp) against jax.jvp and
float64 central finite differences along the tangent direction."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom.frontend.jvp import jvp
from loom.frontend.tracing import Tracer
from loom.transforms import forward_ad

# the derivatives are checked against float64 finite differences
pytestmark = pytest.mark.usefixtures("loom_x64")

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from support.gradient_cases import case_inputs as _inputs  # noqa: E402  (it imports jax)


def _softmax(m, x):
    e = m.exp(x - m.max(x, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


def _layer_norm(m, x, g):
    mu = m.mean(x, axis=-1, keepdims=True)
    var = m.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / m.sqrt(var + 1e-5) * g


# (name, function of (numpy module, *args), argument shapes, positive inputs)
CASES = [
    ("add_sub", lambda m, x, y: x + y - 2.0 * x, [(3, 4), (3, 4)], False),
    ("multiply", lambda m, x, y: x * y * x, [(3, 4), (4,)], False),
    ("divide", lambda m, x, y: x / y, [(3, 4), (3, 4)], True),
    ("negate", lambda m, x: -m.sin(x), [(5,)], False),
    ("exp", lambda m, x: m.exp(x), [(3, 4)], False),
    ("log", lambda m, x: m.log(x), [(3, 4)], True),
    ("tanh", lambda m, x: m.tanh(x), [(3, 4)], False),
    ("sin_cos", lambda m, x: m.sin(x) * m.cos(x), [(6,)], False),
    ("sqrt", lambda m, x: m.sqrt(x), [(6,)], True),
    ("rsqrt_pow", lambda m, x: x ** -0.5, [(6,)], True),
    ("power_int", lambda m, x: x ** 3, [(3, 4)], False),
    ("power_float", lambda m, x, y: x ** y, [(3, 4), (3, 4)], True),
    ("abs", lambda m, x: m.abs(x) * x, [(6,)], False),
    ("maximum", lambda m, x, y: m.maximum(x, y), [(3, 4), (3, 4)], False),
    ("minimum", lambda m, x, y: m.minimum(x, y) ** 2, [(3, 4), (3, 4)], False),
    ("relu", lambda m, x: m.maximum(x, 0.0), [(3, 4)], False),
    ("where", lambda m, x, y: m.where(x > y, x * y, m.sin(y)), [(3, 4), (3, 4)], False),
    ("astype", lambda m, x: m.astype(x, m.float16 if m is jnp else lnp.float16).astype(m.float32) * x,
     [(4,)], False),
    ("broadcast", lambda m, x, b: m.tanh(x + b), [(3, 4), (4,)], False),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (3, 4)) * 2.0, [(4,)], False),
    ("reshape_transpose", lambda m, x: m.transpose(m.reshape(x, (4, 3))) ** 2, [(3, 4)], False),
    ("slice", lambda m, a: m.sin(a[1:3, ::2]) + a[-1, :3], [(4, 5)], False),
    ("reverse", lambda m, a: a[::-1] * m.arange(5.0), [(5,)], False),
    ("concatenate", lambda m, a, b: m.concatenate([a, b, a], axis=1), [(2, 3), (2, 4)], False),
    ("pad", lambda m, a: m.pad(a, ((1, 2), (0, 1))) * 3.0, [(3, 4)], False),
    ("matmul", lambda m, a, b: m.sin(a @ b), [(3, 4), (4, 5)], False),
    ("batched_matmul", lambda m, a, b: a @ b, [(2, 3, 4), (2, 4, 5)], False),
    ("sum_mean", lambda m, x: m.sum(x, axis=0) + m.mean(x ** 2), [(3, 4)], False),
    ("max_min_reduce", lambda m, x: m.max(x, axis=1) * m.min(x, axis=0)[:3], [(3, 4)], False),
    ("softmax", lambda m, x: _softmax(m, x), [(3, 4)], False),
    ("cumsum", lambda m, x: m.cumsum(m.sin(x), axis=1), [(3, 4)], False),
    ("argmax_mask", lambda m, x: m.where(m.arange(6) == m.argmax(x), x, 0.5 * x), [(6,)], False),
    ("layer_norm", lambda m, x, g: _layer_norm(m, x, g), [(3, 8), (8,)], False),
    ("sigmoid_chain", lambda m, x: m.log(1.0 + m.exp(-m.tanh(x))), [(4, 3)], False),
]

_ids = [c[0] for c in CASES]


@pytest.mark.parametrize("name,fn,shapes,positive", CASES, ids=_ids)
def test_jvp_matches_jax(name, fn, shapes, positive):
    args = _inputs(shapes, positive, np.float32)
    tans = _inputs(shapes, False, np.float32, seed=1)
    out, tout = jvp(lambda *a: fn(lnp, *a), tuple(args), tuple(tans))
    # jitted: one XLA compile for the whole jvp instead of one per primitive (eager jax)
    jout, jtout = jax.jit(lambda a, t: jax.jvp(lambda *x: fn(jnp, *x), a, t))(tuple(args), tuple(tans))
    assert out.shape == jout.shape and tout.shape == jtout.shape
    np.testing.assert_allclose(out, np.asarray(jout), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tout, np.asarray(jtout), rtol=1e-4, atol=1e-5)


FD_CASES = [c for c in CASES if c[0] != "astype"]  # float16 rounding defeats finite differences


@pytest.mark.parametrize("name,fn,shapes,positive", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_jvp_matches_finite_differences(name, fn, shapes, positive):
    args = _inputs(shapes, positive, np.float64, seed=2)
    tans = _inputs(shapes, False, np.float64, seed=3)
    f = loom.jit(lambda *a: fn(lnp, *a))
    _, tout = jvp(lambda *a: fn(lnp, *a), tuple(args), tuple(tans))
    assert tout.dtype == np.float64
    eps = 1e-6
    plus = f(*[a + eps * t for a, t in zip(args, tans)])
    minus = f(*[a - eps * t for a, t in zip(args, tans)])
    np.testing.assert_allclose(tout, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_ties_like_jax():
    x = np.array([[1.0, 3.0, 3.0], [0.0, -1.0, 0.0]], np.float32)
    t = np.array([[1.0, 2.0, 5.0], [4.0, -3.0, 0.5]], np.float32)
    for fn in [lambda m, x: m.max(x), lambda m, x: m.min(x, axis=1), lambda m, x: m.maximum(x, 0.0),
               lambda m, x: m.minimum(x, 3.0), lambda m, x: m.maximum(x, x[:, ::-1])]:
        _, ours = jvp(lambda x, fn=fn: fn(lnp, x), (x,), (t,))
        _, theirs = jax.jvp(lambda x, fn=fn: fn(jnp, x), (x,), (t,))
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_pytree_primals_and_outputs():
    rng = np.random.default_rng(7)
    params = {"w": rng.normal(size=(3, 2)).astype(np.float32), "b": [rng.normal(size=(2,)).astype(np.float32)]}
    tparams = {"w": rng.normal(size=(3, 2)).astype(np.float32), "b": [rng.normal(size=(2,)).astype(np.float32)]}
    x = rng.normal(size=(4, 3)).astype(np.float32)
    tx = rng.normal(size=(4, 3)).astype(np.float32)

    def f(m, p, x):
        h = m.tanh(x @ p["w"] + p["b"][0])
        return {"h": h, "loss": (m.mean(h ** 2), m.sum(h))}

    out, tout = jvp(lambda p, x: f(lnp, p, x), (params, x), (tparams, tx))
    jout, jtout = jax.jvp(lambda p, x: f(jnp, p, x), (params, x), (tparams, tx))
    for a, b in zip(jax.tree_util.tree_leaves((out, tout)), jax.tree_util.tree_leaves((jout, jtout))):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert set(out) == {"h", "loss"} and isinstance(tout["loss"], tuple)


def test_integer_primal_has_no_tangent():
    x = np.linspace(-1, 1, 4).astype(np.float32)
    n = np.arange(4, dtype=np.int32)
    out, tout = jvp(lambda x, n: (x * n, n * 2), (x, n), (np.ones(4, np.float32), np.zeros(4, np.int32)))
    np.testing.assert_allclose(out[0], x * n)
    np.testing.assert_allclose(tout[0], n.astype(np.float32))
    np.testing.assert_array_equal(tout[1], np.zeros(4))


def test_mismatched_structure_and_shape_raise():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="same tree structure"):
        jvp(lambda x: x, (x,), ((x, x),))
    with pytest.raises(ValueError, match="tangent shape"):
        jvp(lambda x: x, (x,), (np.ones(4, np.float32),))


def test_transformed_module_round_trips():
    x, w = _inputs([(5, 4), (4, 3)], False, np.float32)
    tx, tw = _inputs([(5, 4), (4, 3)], False, np.float32, seed=4)
    lowered = loom.jit(lambda w, x: _softmax(lnp, lnp.tanh(x @ w))).lower(w, x)
    module = forward_ad.jvp_module(lowered.module)
    module.verify()
    for generic in (False, True):
        text = lir.print(module, generic=generic)
        again = lir.parse(text)
        again.verify()
        assert lir.print(again, generic=generic) == text
    out, tout = loom.execute(module, w, x, tw, tx)
    jout, jtout = jax.jvp(lambda w, x: _softmax(jnp, jnp.tanh(x @ w)), (w, x), (tw, tx))
    np.testing.assert_allclose(out, jout, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tout, jtout, rtol=1e-4, atol=1e-6)


def test_missing_rule_names_op_transformation_and_location(monkeypatch):
    monkeypatch.delitem(forward_ad.JVP_RULES, "stablehlo.sine")
    with pytest.raises(forward_ad.MissingRuleError, match=r"jvp.*stablehlo\.sine.*test_jvp\.py"):
        jvp(lambda x: lnp.sin(x), (np.ones(3, np.float32),), (np.ones(3, np.float32),))


def test_composes_with_jit():
    x = _inputs([(6,)], False, np.float32)[0]
    t = np.ones(6, np.float32)
    jitted = loom.jit(lambda x, t: jvp(lambda y: lnp.sin(y) * y, (x,), (t,))[1])
    _, theirs = jax.jvp(lambda y: jnp.sin(y) * y, (x,), (t,))
    np.testing.assert_allclose(jitted(x, t), theirs, rtol=1e-5, atol=1e-6)


def _raw(fn):
    """A loom.numpy-level function applying a StableHLO builder `fn(builder, *values)` to tracers."""
    def apply(*xs):
        return Tracer(fn(xs[0].trace.emit(), *(x.value for x in xs)), xs[0].trace)
    return apply


def _shlo():
    from loom.dialects import stablehlo
    return stablehlo


RAW_CASES = [
    ("logistic", lambda b, x: _shlo().logistic(b, x), jax.nn.sigmoid, [(3, 4)], False),
    ("log_plus_one", lambda b, x: _shlo().log_plus_one(b, x), jnp.log1p, [(3, 4)], True),
    ("exponential_minus_one", lambda b, x: _shlo().exponential_minus_one(b, x), jnp.expm1, [(5,)], False),
    ("rsqrt", lambda b, x: _shlo().rsqrt(b, x), jax.lax.rsqrt, [(5,)], True),
    ("broadcast_permuted", lambda b, x: _shlo().broadcast_in_dim(b, x, (2, 4, 5, 3), (3, 0, 2)),
     lambda x: jax.lax.broadcast_in_dim(jnp.transpose(x, (1, 2, 0)), (2, 4, 5, 3), (0, 2, 3)), [(3, 2, 1)], False),
    ("reverse", lambda b, x: _shlo().reverse(b, x, (0, 1)), lambda x: jax.lax.rev(x, (0, 1)), [(3, 4)], False),
    ("pad_interior_negative", lambda b, x, v: _shlo().pad(b, x, v, (1, -1), (2, 1), (1, 0)),
     lambda x, v: jax.lax.pad(x, v, ((1, 2, 1), (-1, 1, 0))), [(3, 4), ()], False),
    ("slice_strided", lambda b, x: _shlo().slice_(b, x, (1, 0), (4, 5), (2, 3)),
     lambda x: jax.lax.slice(x, (1, 0), (4, 5), (2, 3)), [(4, 5)], False),
    ("dot_general_batch_contract", lambda b, x, y: _shlo().dot_general(b, x, y, _shlo().DotDimensionNumbers.get(
        lhs_batching_dimensions=(1,), rhs_batching_dimensions=(0,), lhs_contracting_dimensions=(3, 0),
        rhs_contracting_dimensions=(1, 2))),
     lambda x, y: jax.lax.dot_general(x, y, (((3, 0), (1, 2)), ((1,), (0,)))), [(2, 3, 4, 5), (3, 5, 2, 6)], False),
    ("reduce_max_all", lambda b, x: _reduce_max(b, x), lambda x: jnp.max(x, axis=(0, 1)), [(3, 4)], False),
]


def _reduce_max(b, x):
    from loom.ir.types import FloatType, RankedTensorType
    s = _shlo()
    init = s.constant(b, np.asarray(-np.inf, np.float32), RankedTensorType((), FloatType("f32"), None))
    return s.reduce(b, [x], [init], [0, 1], lambda bb, a: [s.maximum(bb, a[0], a[1])])


@pytest.mark.parametrize("name,build,jax_fn,shapes,positive", RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_op_rules_match_jax_jvp(name, build, jax_fn, shapes, positive):
    args = _inputs(shapes, positive, np.float32, seed=5)
    tans = _inputs(shapes, False, np.float32, seed=6)
    out, tout = jvp(_raw(build), tuple(args), tuple(tans))
    jout, jtout = jax.jvp(jax_fn, tuple(args), tuple(tans))
    np.testing.assert_allclose(out, jout, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tout, jtout, rtol=1e-4, atol=1e-5)


def test_composes_with_grad_and_itself():
    x, t = _inputs([(5,), (5,)], False, np.float32, seed=8)

    def f(m):
        return lambda x: m.sum(m.sin(x) * m.tanh(x))

    hvp = jvp(loom.grad(f(lnp)), (x,), (t,))[1]
    np.testing.assert_allclose(hvp, jax.jvp(jax.grad(f(jnp)), (x,), (t,))[1], rtol=1e-4, atol=1e-5)
    g = loom.grad(lambda x: lnp.sum(jvp(f(lnp), (x,), (t,))[1]))(x)
    jg = jax.grad(lambda x: jnp.sum(jax.jvp(f(jnp), (x,), (t,))[1]))(x)
    np.testing.assert_allclose(g, jg, rtol=1e-4, atol=1e-5)
    second = jvp(lambda x: jvp(f(lnp), (x,), (t,))[1], (x,), (t,))[1]
    jsecond = jax.jvp(lambda x: jax.jvp(f(jnp), (x,), (t,))[1], (x,), (t,))[1]
    np.testing.assert_allclose(second, jsecond, rtol=1e-4, atol=1e-5)


def test_python_scalar_primal_and_closure_change_is_seen():
    scale = [2.0]

    def f(x):
        return x * x * scale[0]

    out, tout = jvp(f, (3.0,), (1.0,))
    assert float(out) == 18.0 and float(tout) == 12.0
    scale[0] = 1.0
    assert float(jvp(f, (3.0,), (1.0,))[1]) == 6.0
