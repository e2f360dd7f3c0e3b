"""More reverse-mode gradients (cumsum, sort, remainder, arctan2, clip, var/std, loom.nn, einsum,
tensordot, pad, roll, flip, tile, repeat, concatenate/split) against jax.grad and float64 finite
differences, and the numpy-style methods of `Tracer` inside `loom.jit`."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom.frontend.grad import grad

# the derivatives are checked against float64 finite differences
pytestmark = pytest.mark.usefixtures("loom_x64")

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from support.gradient_cases import ARRAY_OP_CASES as CASES  # noqa: E402  (it imports jax)
from support.gradient_cases import case_inputs as _inputs  # noqa: E402
from support.gradient_cases import weights  # noqa: E402  (it imports jax)


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


FD_NAMES = {"cumsum", "cumprod_3d", "sort_axis0", "remainder", "arctan2", "var", "std", "log_softmax", "gelu",
            "einsum_batch", "tensordot", "pad", "roll", "tile", "repeat", "concatenate_split"}
FD_CASES = [c for c in CASES if c[0] in FD_NAMES]


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


def test_sort_gradient_with_ties_follows_the_stable_permutation():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0], np.float32)
    w = np.arange(5, dtype=np.float32)
    ours = grad(lambda x: lnp.sum(lnp.sort(x) * w))(x)
    theirs = jax.grad(lambda x: jnp.sum(jnp.sort(x) * w))(x)
    np.testing.assert_allclose(ours, np.asarray(theirs))


def test_cumprod_gradient_with_zeros():
    x = np.array([[2.0, 0.0, 3.0, -1.5], [0.0, 0.0, 1.0, 2.0]], np.float32)
    w = weights((2, 4))
    ours = grad(lambda x: lnp.sum(lnp.cumprod(x, axis=1) * w))(x)
    theirs = jax.grad(lambda x: jnp.sum(jnp.cumprod(x, axis=1) * w))(x)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-5, atol=1e-6)


def test_argsort_carries_no_gradient():
    x = np.array([0.3, -1.0, 2.0], np.float32)
    g = grad(lambda x: lnp.sum(x * lnp.argsort(x).astype(np.float32)))(x)
    np.testing.assert_allclose(g, np.argsort(x).astype(np.float32))


# --- Tracer methods ------------------------------------------------------------------------------

METHODS = [
    ("argmax", lambda x: x.argmax(), lambda x: x.argmax()),
    ("argmax_axis", lambda x: x.argmax(axis=1), lambda x: x.argmax(axis=1)),
    ("argmin_axis", lambda x: x.argmin(axis=0), lambda x: x.argmin(axis=0)),
    ("prod", lambda x: x.prod(axis=1), lambda x: x.prod(axis=1)),
    ("var", lambda x: x.var(axis=0, ddof=1), lambda x: x.var(axis=0, ddof=1)),
    ("std", lambda x: x.std(keepdims=True), lambda x: x.std(keepdims=True)),
    ("any", lambda x: (x > 1.0).any(axis=1), lambda x: (x > 1.0).any(axis=1)),
    ("all", lambda x: (x > -1.0).all(), lambda x: (x > -1.0).all()),
    ("cumsum", lambda x: x.cumsum(axis=1), lambda x: x.cumsum(axis=1)),
    ("cumprod", lambda x: x.cumprod(axis=0), lambda x: x.cumprod(axis=0)),
    ("sort", lambda x: x.sort(), lambda x: np.sort(x)),
    ("sort_axis0", lambda x: x.sort(axis=0), lambda x: np.sort(x, axis=0)),
    ("argsort", lambda x: x.argsort(), lambda x: x.argsort(kind="stable")),
    ("flatten", lambda x: x.flatten(), lambda x: x.flatten()),
    ("ravel", lambda x: x.ravel(), lambda x: x.ravel()),
    ("swapaxes", lambda x: x.swapaxes(0, 1), lambda x: x.swapaxes(0, 1)),
    ("clip", lambda x: x.clip(-0.5, 0.5), lambda x: x.clip(-0.5, 0.5)),
    ("clip_min", lambda x: x.clip(0.0), lambda x: x.clip(0.0)),
    ("round", lambda x: (x * 10).round(), lambda x: (x * 10).round()),
    ("round_decimals", lambda x: x.round(1), lambda x: x.round(1)),
    ("squeeze", lambda x: x[:1].squeeze(), lambda x: x[:1].squeeze()),
    ("squeeze_axis", lambda x: x[:, :1].squeeze(1), lambda x: x[:, :1].squeeze(1)),
    ("transpose", lambda x: x.transpose(), lambda x: x.transpose()),
    ("transpose_args", lambda x: x.reshape(2, 3, 2).transpose(2, 0, 1),
     lambda x: x.reshape(2, 3, 2).transpose(2, 0, 1)),
    ("transpose_tuple", lambda x: x.reshape(2, 3, 2).transpose((1, 2, 0)),
     lambda x: x.reshape(2, 3, 2).transpose((1, 2, 0))),
]


@pytest.mark.parametrize("name,ours,ref", METHODS, ids=[m[0] for m in METHODS])
def test_tracer_methods_match_numpy(name, ours, ref):
    x = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
    out = np.asarray(loom.jit(ours)(x))
    expected = np.asarray(ref(x))
    assert out.shape == expected.shape
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


# --- rules for ops loom.numpy does not emit itself -----------------------------------------------


def _clamp(lo, x, hi):
    from loom.dialects import stablehlo
    from loom.frontend.tracing import Tracer
    lo_v = lo.value if isinstance(lo, Tracer) else x.trace.constant(np.asarray(lo, x.dtype))
    return Tracer(stablehlo.clamp(x.trace.emit(), lo_v, x.value, hi.value), x.trace)


@pytest.mark.parametrize("hi_shape", [(3, 4), ()], ids=["array_max", "scalar_max"])
def test_clamp_gradient(hi_shape):
    x, hi = _inputs([(3, 4), hi_shape], False, np.float32, seed=4)
    hi = np.abs(hi) * 0.5
    w = weights((3, 4))
    ours = grad(lambda x, hi: lnp.sum(_clamp(-0.5, x, hi) * w), (0, 1))(x, hi)
    # (jax.grad of lax.clamp with a scalar max fails inside JAX; broadcasting it is equivalent)
    theirs = jax.grad(lambda x, hi: jnp.sum(jax.lax.clamp(np.float32(-0.5), x, jnp.broadcast_to(hi, x.shape)) * w),
                      (0, 1))(x, hi)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6)


def test_clamp_gradient_of_array_min():
    lo, x = _inputs([(5,), (5,)], False, np.float32, seed=5)
    hi = np.float32(0.8)
    ours = grad(lambda lo, x: lnp.sum(_clamp(lo, x, lnp.asarray(hi) + 0.0 * lnp.sum(x)) ** 2), (0, 1))(lo, x)
    theirs = jax.grad(lambda lo, x: jnp.sum(jax.lax.clamp(lo, x, jnp.full((5,), hi)) ** 2), (0, 1))(lo, x)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6)


def test_sort_of_two_float_operands_sends_both_cotangents_back():
    from loom.dialects import stablehlo
    from loom.frontend.tracing import Tracer

    def f(keys, values):
        b = keys.trace.emit()
        sk, sv = stablehlo.sort(b, [keys.value, values.value], 0,
                                lambda bb, args: [stablehlo.compare(bb, args[0], args[1], "LT")], is_stable=True)
        w = np.arange(1.0, 7.0, dtype=np.float32)
        return lnp.sum(Tracer(sk, keys.trace) * w) + lnp.sum(lnp.sin(Tracer(sv, keys.trace)) * w[::-1])

    def jf(keys, values):
        sk, sv = jax.lax.sort((keys, values), num_keys=1)
        w = np.arange(1.0, 7.0, dtype=np.float32)
        return jnp.sum(sk * w) + jnp.sum(jnp.sin(sv) * w[::-1])

    keys, values = _inputs([(6,), (6,)], False, np.float32, seed=6)
    ours = grad(f, (0, 1))(keys, values)
    theirs = jax.grad(jf, (0, 1))(keys, values)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6)


def test_transformed_module_with_new_rules_verifies_and_round_trips():
    import loom.ir as lir
    from loom.transforms import autodiff

    def f(m, x):
        return m.sum(m.sort(m.cumsum(x, axis=1)) * m.cumprod(x, axis=0)) + m.sum(m.remainder(x, 0.7))

    x = _inputs([(3, 4)], False, np.float32)[0]
    module = autodiff.vjp_module(loom.jit(lambda x: f(lnp, x)).lower(x).module, wrt=[0])
    module.verify()
    text = lir.print(module)
    assert lir.print(lir.parse(text)) == text
    _, gx = loom.execute(module, x, np.float32(1.0))
    np.testing.assert_allclose(gx, np.asarray(jax.grad(lambda x: f(jnp, x))(x)), rtol=1e-4, atol=1e-5)


def test_value_and_index_reduce_gives_the_values_a_max_gradient():
    from loom.dialects import stablehlo
    from loom.frontend.tracing import Tracer, tensor_type

    def body(bb, args):
        av, ai, bv, bi = args
        wins = stablehlo.compare(bb, av, bv, "GE")
        return [stablehlo.select(bb, wins, av, bv), stablehlo.select(bb, wins, ai, bi)]

    def f(x):
        b = x.trace.emit()
        idx = stablehlo.iota(b, tensor_type(x.shape, np.int32), 1)
        init_v = x.trace.constant(np.float32(-np.inf))
        init_i = x.trace.constant(np.int32(0))
        vals, inds = stablehlo.reduce(b, [x.value, idx], [init_v, init_i], [1], body)
        return lnp.sum(Tracer(vals, x.trace) ** 2) + lnp.sum(Tracer(inds, x.trace).astype(np.float32))

    x = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, -1.0, 2.0, 1.5]], np.float32)
    ours = grad(f)(x)
    theirs = jax.grad(lambda x: jnp.sum(jnp.max(x, axis=1) ** 2))(x)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)
