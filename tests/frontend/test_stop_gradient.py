"""`loom.lax.stop_gradient` against `jax.lax.stop_gradient`: values, reverse mode (first and second
order), forward mode, vmap, jit, inside cond / while_loop / scan bodies; the `ad.stop_gradient` op's
text form, verifier, both executors, and the `lower-stop-gradient` pass."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom import lax
from loom.frontend.grad import _Differentiable
from loom.rewrite import PassManager
from loom.runtime.executable import execute

jax = pytest.importorskip("jax")
jnp = jax.numpy


pytestmark = pytest.mark.usefixtures("jax_x64", "loom_x64")  # float64 in jax and loom

RNG = np.random.default_rng(7)


def both(body):
    """The same program written once against (lnp, lax) and once against (jnp, jax.lax)."""
    return body(lnp, lax), body(jnp, jax.lax)


def _plain(np_, lx):
    return lambda x: np_.sum(np_.sin(x) * lx.stop_gradient(x * x))


def _two_args(np_, lx):
    return lambda x, y: np_.sum(lx.stop_gradient(np_.tanh(x * y)) * y + x * lx.stop_gradient(y) ** 2)


def _pytree(np_, lx):
    def f(x):
        s = lx.stop_gradient({"a": x * 2.0, "b": (np_.exp(x), x)})
        return np_.sum(s["a"] * x + s["b"][0] * np_.cos(x) - s["b"][1] * x ** 3)
    return f


def _second_order(np_, lx):
    # the stopped factor is constant for the first derivative, so grad of grad sees it too
    return lambda x: np_.sum(x ** 3 * lx.stop_gradient(np_.sin(x)) + lx.stop_gradient(x) * x ** 2)


def _fori(np_, lx):
    def f(x):
        return np_.sum(lx.fori_loop(0, 5, lambda i, c: c * lx.stop_gradient(c) * 0.5 + np_.sin(c), x))
    return f


def _scan(np_, lx):
    def f(x, xs):
        def step(c, xi):
            c = np_.tanh(c * xi + lx.stop_gradient(c * c))
            return c, lx.stop_gradient(c) * c
        c, ys = lx.scan(step, x, xs)
        return np_.sum(c) + np_.sum(ys)
    return f


def _cond(np_, lx):
    def f(x):
        return lx.cond(np_.sum(x) > 0, lambda x: np_.sum(lx.stop_gradient(x) * x ** 2),
                       lambda x: np_.sum(lx.stop_gradient(x ** 2) * x), x)
    return f


CASES = [
    (_plain, lambda: (RNG.normal(size=5),)),
    (_two_args, lambda: (RNG.normal(size=(3,)), RNG.normal(size=(3,)))),
    (_pytree, lambda: (RNG.normal(size=4),)),
    (_second_order, lambda: (RNG.normal(size=4),)),
    (_fori, lambda: (RNG.uniform(0.1, 0.5, size=3),)),
    (_scan, lambda: (RNG.normal(size=3), RNG.normal(size=(4, 3)))),
    (_cond, lambda: (RNG.normal(size=3) + 0.5,)),
    (_cond, lambda: (RNG.normal(size=3) - 0.5,)),
]


@pytest.mark.parametrize("case,args", CASES)
def test_values_and_gradients_match_jax(case, args):
    lf, jf = both(case)
    xs = args()
    np.testing.assert_allclose(loom.jit(lf)(*xs), jf(*xs), rtol=1e-12)
    nums = tuple(range(len(xs)))
    got = loom.grad(lf, argnums=nums)(*xs)
    want = jax.grad(jf, argnums=nums)(*xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    # grad of the jitted function: the op survives the jit pipeline (canonicalize, cse)
    got = loom.grad(loom.jit(lf), argnums=nums)(*xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case,args", CASES)
def test_jvp_matches_jax(case, args):
    lf, jf = both(case)
    xs = args()
    ts = tuple(RNG.normal(size=np.shape(x)) for x in xs)
    lp, lt = loom.jvp(lf, xs, ts)
    jp, jt = jax.jvp(jf, xs, ts)
    np.testing.assert_allclose(lp, jp, rtol=1e-12)
    np.testing.assert_allclose(lt, jt, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", [_plain, _pytree, _second_order, _fori])
def test_second_order_matches_jax(case):
    lf, jf = both(case)
    x = RNG.uniform(0.1, 0.5, size=3)
    v = RNG.normal(size=3)

    def lhvp(x):
        return lnp.sum(loom.grad(lf)(x) * v)

    def jhvp(x):
        return jnp.sum(jax.grad(jf)(x) * v)
    np.testing.assert_allclose(loom.grad(lhvp)(x), jax.grad(jhvp)(x), rtol=1e-10, atol=1e-12)
    # scalar: d2/dx2 of x^3 * sg(x^2) = 6x * x^2 (the stopped factor stays a constant)
    g2 = loom.grad(loom.grad(lambda x: x ** 3 * lax.stop_gradient(x * x)))(np.float64(1.5))
    assert float(g2) == pytest.approx(6 * 1.5 * 1.5 ** 2, rel=1e-14)


def test_vmap_and_vmap_of_grad_match_jax():
    lf, jf = both(_two_args)
    xs, ys = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3))
    np.testing.assert_allclose(loom.vmap(lf)(xs, ys), jax.vmap(jf)(xs, ys), rtol=1e-12)
    np.testing.assert_allclose(loom.vmap(loom.grad(lf, argnums=1))(xs, ys),
                               jax.vmap(jax.grad(jf, argnums=1))(xs, ys), rtol=1e-10, atol=1e-12)
    # batched along another axis, the other operand shared
    np.testing.assert_allclose(loom.vmap(lf, in_axes=(1, None))(xs.T, ys[0]),
                               jax.vmap(jf, in_axes=(1, None))(xs.T, ys[0]), rtol=1e-12)
    np.testing.assert_allclose(loom.vmap(loom.grad(lf), in_axes=(1, None))(xs[:3].T, ys[0]),
                               jax.vmap(jax.grad(jf), in_axes=(1, None))(xs[:3].T, ys[0]), rtol=1e-10)


def _while_sg(np_, lx):
    """A data-dependent loop whose body stops the gradient through part of the carry."""
    def f(x, a):
        def body(s):
            i, v = s
            return i + 1, v * a + lx.stop_gradient(v * v) * 0.1
        return np_.sum(lx.while_loop(lambda s: s[0] < 4, body, (0, x))[1])
    return f


def test_inside_while_loop_body_matches_jax_forward_and_fori_reverse():
    lf, jf = both(_while_sg)
    x, a = RNG.uniform(0.1, 0.5, size=3), np.array(0.9)
    np.testing.assert_allclose(loom.jit(lf)(x, a), jf(x, a), rtol=1e-12)
    # jax cannot reverse-differentiate while_loop; the same trip count as a fori_loop can
    def jfori(x, a):
        return jnp.sum(jax.lax.fori_loop(0, 4, lambda i, v: v * a + jax.lax.stop_gradient(v * v) * 0.1, x))
    got = loom.grad(lf, argnums=(0, 1))(x, a)
    want = jax.grad(jfori, argnums=(0, 1))(x, a)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    # by hand: the stopped term adds nothing, so d/dx = a^4 per element
    np.testing.assert_allclose(got[0], np.full(3, 0.9 ** 4), rtol=1e-12)
    lp, lt = loom.jvp(lambda x: lf(x, a), (x,), (np.ones(3),))
    jp, jt = jax.jvp(lambda x: jf(x, a), (x,), (np.ones(3),))
    np.testing.assert_allclose(lt, jt, rtol=1e-10)
    # second order through the loop: d2/da2 of sum(x a^4 + ...) with the stopped terms constant
    lh = loom.grad(loom.grad(lf, argnums=1), argnums=1)(x, a)
    jh = jax.grad(jax.grad(jfori, argnums=1), argnums=1)(x, a)
    np.testing.assert_allclose(lh, jh, rtol=1e-9)


def _newton_steps(steps, x0):
    return lambda a: lax.fori_loop(0, steps, lambda i, x: x - (x * x - a) / (2.0 * x), x0)


def test_data_dependent_while_with_stop_gradient_vs_numpy():
    """Newton's iteration for sqrt(a) until converged, with the denominator's x stopped: each step's
    derivative is dx' = dx - (2 x dx - 1) / (2 x) = 1 / (2 x), so the gradient is 1 / (2 x) at the
    iterate before the last one (computed here with numpy). Without stop_gradient it matches
    float64 central differences."""
    def newton(a, x0, stop):
        def body(s):
            x, n = s
            d = lax.stop_gradient(x) if stop else x
            return x - (x * x - a) / (2.0 * d), n + 1
        return lax.while_loop(lambda s: lnp.logical_and(lnp.abs(s[0] * s[0] - a) > 1e-9, s[1] < 50), body,
                              (x0, 0))[0]
    for a_ in (2.0, 7.5, 0.3):
        a, x0 = np.array(a_), np.array(1.0)
        xs = [1.0]
        while abs(xs[-1] ** 2 - a_) > 1e-9:
            xs.append(xs[-1] - (xs[-1] ** 2 - a_) / (2 * xs[-1]))
        assert len(xs) > 3
        np.testing.assert_allclose(loom.jit(lambda a, x0: newton(a, x0, True))(a, x0), xs[-1], rtol=1e-15)
        g = loom.grad(lambda a, x0: newton(a, x0, True))(a, x0)
        np.testing.assert_allclose(g, 1 / (2 * xs[-2]), rtol=1e-12)
        # the true derivative differs: the stop changed the gradient (and not the value)
        full = loom.grad(lambda a, x0: newton(a, x0, False))(a, x0)
        eps = 1e-7
        # the same trip count on both sides: a fori over len(xs) - 1 Newton steps
        fixed = _newton_steps(len(xs) - 1, x0)
        fd = (loom.jit(fixed)(np.asarray(a + eps)) - loom.jit(fixed)(np.asarray(a - eps))) / (2 * eps)
        np.testing.assert_allclose(full, fd, rtol=1e-6)
        assert abs(float(full) - float(g)) > 1e-12


def test_op_text_round_trip_executors_and_lowering_pass():
    f = _plain(lnp, lax)
    x = RNG.normal(size=5)
    text = loom.jit(f).lower(x).as_text()
    assert text.count('"ad.stop_gradient"') == 1
    traced, leaves, _ = _Differentiable(f, False).prepare((x,), {}, (0,))
    gtext = lir.print(traced.module, generic=True)
    assert '"ad.stop_gradient"' in gtext
    module = lir.parse(gtext)
    assert lir.print(module, generic=True) == gtext
    module.verify()
    ins = [*leaves, np.ones(())]
    interp = execute(module, *ins, executor="interpreter")
    compiled = execute(module, *ins, executor="compiled")
    want = jax.value_and_grad(_plain(jnp, jax.lax))(x)
    for outs in (interp, compiled):
        np.testing.assert_allclose(outs[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(outs[-1], want[1], rtol=1e-12)
    # after differentiation, lowering leaves a pure StableHLO module with the same results
    PassManager.parse("builtin.module(lower-stop-gradient)").run(module)
    lowered = lir.print(module, generic=True)
    assert "ad.stop_gradient" not in lowered
    module.verify()
    for a, b in zip(execute(module, *ins, executor="compiled"), compiled):
        np.testing.assert_allclose(a, b, rtol=1e-15)
    # canonicalize + cse keep it (the gradient of an optimised module is still right)
    m2 = lir.parse(text)
    PassManager.parse("builtin.module(canonicalize,cse)").run(m2)
    assert '"ad.stop_gradient"' in lir.print(m2, generic=True)


def test_verifier_names_the_type_mismatch():
    bad = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf64> {
    %0 = "ad.stop_gradient"(%arg0) : (tensor<4xf32>) -> tensor<4xf64>
    return %0 : tensor<4xf64>
  }
}"""
    with pytest.raises(Exception, match="differs from operand type 'tensor<4xf32>'"):
        lir.parse(bad).verify()


def test_integer_leaves_and_plain_arrays_pass_through():
    out = lax.stop_gradient({"a": np.arange(3.0), "b": 3, "c": None})
    np.testing.assert_array_equal(out["a"], np.arange(3.0))
    assert int(out["b"]) == 3 and out["c"] is None

    def f(x, n):
        n2 = lax.stop_gradient(n)
        return lnp.sum(x * n2) + lnp.sum(lax.stop_gradient(x) * x)
    x, n = RNG.normal(size=3), np.arange(3, dtype=np.int32)
    np.testing.assert_allclose(loom.grad(f)(x, n), n + x, rtol=1e-12)
