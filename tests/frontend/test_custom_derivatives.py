"""`loom.custom_vjp` and `loom.custom_jvp` against `jax.custom_vjp` and `jax.custom_jvp`: the same
Python source (loom.numpy for jax.numpy) differentiated by both, under grad, jvp, jit, vmap, grad
of grad, inside loops; the IR ops they make (`ad.custom_vjp`, `ad.custom_jvp`) print, parse and
verify; bad rules get clear errors."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import loom  # noqa: E402
import loom.ir  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom.transforms.autodiff import lower_stop_gradients  # noqa: E402

rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# Each builder makes a custom_vjp function from a module pair (loom, loom.numpy) or (jax, jax.numpy).

def scaled_sin(m, np_):
    """A derivative that is not the function's: twice the true one for x, the true one for y."""
    @m.custom_vjp
    def f(x, y):
        return np_.sin(x) * y

    def fwd(x, y):
        return np_.sin(x) * y, (np_.cos(x), np_.sin(x), y)

    def bwd(res, g):
        c, s, y = res
        return (2.0 * c * g * y, s * g)

    f.defvjp(fwd, bwd)
    return f


def clip_gradient(m, np_):
    @m.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (np_.clip(g, -0.5, 0.5),))
    return f


def log1pexp(m, np_):
    """The stable derivative 1 - 1/(1+e^x) where autodiff of log(1+e^x) gives nan for large x."""
    @m.custom_vjp
    def f(x):
        return np_.log(1.0 + np_.exp(x))

    # fwd calls f itself, as JAX's documentation does: that inner call is the plain function
    f.defvjp(lambda x: (f(x), x), lambda x, g: ((1.0 - 1.0 / (1.0 + np_.exp(x))) * g,))
    return f


def pytree_io(m, np_):
    """Pytree argument and output, a None cotangent, an integer argument."""
    @m.custom_vjp
    def f(params, n):
        w, b = params["w"], params["b"]
        return {"y": np_.tanh(w * b) * n, "z": w + b}

    def fwd(params, n):
        return f.fun(params, n), (params["w"], params["b"], n)

    def bwd(res, g):
        w, b, n = res
        return ({"w": g["y"] * b * n + g["z"], "b": None}, None)

    f.defvjp(fwd, bwd)
    return f


CASES = {
    "scaled_sin": (scaled_sin, lambda f: lambda x, y: f(x, y).sum(), lambda: (rand(5), rand(5))),
    "clip_gradient": (clip_gradient, lambda f: lambda x, y: (f(x) * y * 3.0).sum(), lambda: (rand(6), rand(6))),
    "log1pexp": (log1pexp, lambda f: lambda x, y: (f(x) * y).sum(),
                 lambda: (np.array([-100.0, -1.0, 0.0, 3.0, 100.0], np.float32), rand(5))),
    "pytree": (pytree_io, lambda f: lambda x, y: (f({"w": x, "b": y}, 3)["y"] + f({"w": x, "b": y}, 2)["z"]).sum(),
               lambda: (rand(4), rand(4))),
}


def pair(name):
    build, loss, args = CASES[name]
    return loss(build(loom, lnp)), loss(build(jax, jnp)), args()


def close(got, want, rtol=1e-5):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_grad_matches_jax(name):
    mine, theirs, args = pair(name)
    want = jax.grad(theirs, argnums=(0, 1))(*args)
    close(loom.grad(mine, argnums=(0, 1))(*args), want)
    close(loom.jit(loom.grad(mine, argnums=(0, 1)))(*args), want)
    close(loom.value_and_grad(mine)(*args)[0], theirs(*args))


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_and_grad_compose_as_in_jax(name):
    mine, theirs, args = pair(name)
    batched = [np.stack([a, a * 0.5 + 0.1]) for a in args]
    # jax's side jitted: one XLA compile per transformed function instead of one per primitive
    close(loom.vmap(loom.grad(mine))(*batched), jax.jit(jax.vmap(jax.grad(theirs)))(*batched))

    def summed(f, vmap):
        return lambda x, y: vmap(f)(x, y).sum()
    close(loom.grad(summed(mine, loom.vmap))(*batched), jax.jit(jax.grad(summed(theirs, jax.vmap)))(*batched))


def test_grad_of_grad_differentiates_the_bwd_function():
    mine, theirs, (x, y) = pair("scaled_sin")
    want = jax.grad(lambda x: jax.grad(theirs)(x, y).sum())(x)
    close(loom.grad(lambda x: loom.grad(mine)(x, y).sum())(x), want)


def test_inside_a_loop_body():
    """In a fori_loop body (loom differentiates through while loops by saving the residuals of
    each iteration on stacks) and in a data-dependent while loop (which JAX cannot differentiate:
    compared with the same number of iterations unrolled in JAX)."""
    f_l, f_j = scaled_sin(loom, lnp), scaled_sin(jax, jnp)
    x, y = rand(3), rand(3)

    def loop(m, f):
        return lambda x: m.lax.fori_loop(0, 4, lambda i, c: f(c, y) + 0.1 * c, x).sum()
    close(loom.grad(loop(loom, f_l))(x), jax.grad(loop(jax, f_j))(x))

    def until_small(x):
        return loom.lax.while_loop(lambda c: lnp.max(lnp.abs(c)) > 0.3, lambda c: f_l(c, y) * 0.5, x).sum()
    steps, c = 0, x
    while np.max(np.abs(c)) > 0.3:
        c, steps = np.sin(c) * y * 0.5, steps + 1

    def unrolled(x):
        for _ in range(steps):
            x = f_j(x, y) * 0.5
        return x.sum()
    close(loom.grad(until_small)(x), jax.grad(unrolled)(x))


def test_nondiff_argnums_match_jax():
    def build(m, np_):
        def fn(scale, x):
            return np_.sin(x) * scale
        f = m.custom_vjp(fn, nondiff_argnums=(0,))
        f.defvjp(lambda scale, x: (np_.sin(x) * scale, np_.cos(x)), lambda scale, c, g: (scale * c * g * 3.0,))
        return f
    f_l, f_j = build(loom, lnp), build(jax, jnp)
    x = rand(4)
    close(loom.grad(lambda x: f_l(2.5, x).sum())(x), jax.grad(lambda x: f_j(2.5, x).sum())(x))
    with pytest.raises(TypeError, match="nondiff_argnums"):
        loom.grad(lambda s, x: f_l(s, x).sum())(np.float32(2.5), x)


def test_runs_the_function_outside_traces_and_keeps_its_value_under_jit():
    f_l = scaled_sin(loom, lnp)
    x, y = rand(5), rand(5)
    np.testing.assert_allclose(f_l(x, y), np.sin(x) * y, rtol=1e-6)
    np.testing.assert_allclose(loom.jit(f_l)(x, y), np.sin(x) * y, rtol=1e-6)


def test_ir_prints_parses_verifies_and_lowers():
    f_l = scaled_sin(loom, lnp)
    x, y = rand(3), rand(3)
    lowered = loom.jit(f_l).lower(x, y)
    text = lowered.as_text(generic=True)
    assert '"ad.custom_vjp"' in text and "operandSegmentSizes = array<i32: 2, 1, 3>" in text
    module = loom.ir.parse(text)
    module.verify()
    assert loom.ir.print(module, generic=True) == text
    assert lower_stop_gradients(module) == 1
    module.verify()
    assert "ad.custom_vjp" not in loom.ir.print(module)
    np.testing.assert_allclose(loom.compile(module)(x, y), np.sin(x) * y, rtol=1e-6)


def test_verifier_rejects_a_backward_region_of_the_wrong_types():
    f_l = scaled_sin(loom, lnp)
    x = rand(3)
    text = loom.jit(f_l).lower(x, x).as_text(generic=True)
    bad = text.replace("array<i32: 2, 1, 3>", "array<i32: 1, 2, 3>")
    with pytest.raises(Exception, match="ad.custom_vjp"):
        loom.ir.parse(bad).verify()


def test_forward_mode_is_refused_as_in_jax():
    f_l = scaled_sin(loom, lnp)
    x = rand(3)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff \\(jvp\\) to a custom_vjp function"):
        loom.jvp(lambda x: f_l(x, x), (x,), (x,))


@pytest.mark.parametrize("bwd, message", [
    (lambda r, g: g, "must return a tuple with one cotangent per differentiable argument \\(1\\)"),
    (lambda r, g: (g, g), "must return a tuple with one cotangent per differentiable argument \\(1\\), got a tuple"),
    (lambda r, g: (lnp.zeros(2),), "cotangent of shape \\(2,\\) for input\\[0\\] of shape \\(3,\\)"),
    (lambda r, g: ({"a": g},), "returned a cotangent for argument 0 with structure"),
])
def test_bad_bwd_results_are_clear_errors(bwd, message):
    @loom.custom_vjp
    def f(x):
        return x * 2.0
    f.defvjp(lambda x: (x * 2.0, None), bwd)
    with pytest.raises(TypeError, match=message):
        loom.grad(lambda x: f(x).sum())(rand(3))


def test_bad_fwd_and_missing_defvjp():
    @loom.custom_vjp
    def f(x):
        return x
    with pytest.raises(TypeError, match="called before defvjp"):
        loom.grad(lambda x: f(x).sum())(rand(3))
    f.defvjp(lambda x: x, lambda r, g: (g,))
    with pytest.raises(TypeError, match="must return a pair \\(output, residuals\\)"):
        loom.grad(lambda x: f(x).sum())(rand(3))


def test_on_the_torch_backend():
    pytest.importorskip("torch")
    from loom.runtime.devices import device_put
    mine, theirs, args = pair("scaled_sin")
    got = loom.grad(mine, argnums=(0, 1))(*(device_put(a, "torch:cpu") for a in args))
    close([np.asarray(g) for g in got], jax.grad(theirs, argnums=(0, 1))(*args))


def test_closing_over_a_differentiated_value_is_an_error_not_a_lost_derivative():
    def loss(w, x):
        @loom.custom_vjp
        def f(x):
            return x * w
        f.defvjp(lambda x: (x * w, None), lambda _, g: (g * w,))
        return f(x).sum()

    x, w = rand(3), rand(3)
    np.testing.assert_allclose(loom.grad(loss, argnums=1)(w, x), w, rtol=1e-6)  # w only a constant: fine
    with pytest.raises(TypeError, match="closes over a value being differentiated"):
        loom.grad(loss, argnums=0)(w, x)



# custom_jvp -------------------------------------------------------------------------------------

def jvp_scaled_sin(m, np_):
    """A JVP that is not the function's derivative: twice the true one along x."""
    @m.custom_jvp
    def f(x, y):
        return np_.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return f(x, y), 2.0 * np_.cos(x) * y * tx + np_.sin(x) * ty
    return f


def jvps_relu(m, np_):
    """JAX's own relu: `defjvps`, with a derivative of 0 at 0."""
    @m.custom_jvp
    def f(x):
        return np_.maximum(x, 0.0)

    f.defjvps(lambda g, ans, x: np_.where(x > 0, g, np_.zeros_like(g)))
    return f


def jvp_pytree(m, np_):
    """A pytree argument, two outputs, one of them with a zero tangent."""
    @m.custom_jvp
    def f(p):
        return np_.tanh(p["a"]) * p["b"], p["a"] * 3.0

    @f.defjvp
    def f_jvp(primals, tangents):
        (p,), (t,) = primals, tangents
        out = f(p)
        return out, (t["a"] * p["b"] + np_.tanh(p["a"]) * t["b"], np_.zeros_like(p["a"]))
    return f


JVP_CASES = {
    "scaled_sin": (jvp_scaled_sin, lambda f: lambda x, y: f(x, y), lambda: (rand(5), rand(5))),
    "relu": (jvps_relu, lambda f: lambda x, y: f(x) * y,
             lambda: (np.array([-1.0, 0.0, 0.0, 2.0], np.float32), rand(4))),
    "pytree": (jvp_pytree, lambda f: lambda x, y: f({"a": x, "b": y})[0] + f({"a": x, "b": y})[1] * y,
               lambda: (rand(4), rand(4))),
}


def jvp_pair(name):
    build, fn, args = JVP_CASES[name]
    return fn(build(loom, lnp)), fn(build(jax, jnp)), args()


@pytest.mark.parametrize("name", list(JVP_CASES))
def test_custom_jvp_forward_and_reverse_match_jax(name):
    mine, theirs, args = jvp_pair(name)
    tangents = tuple(rand(*a.shape) for a in args)
    # jax's side jitted (and its jvp computed once): one XLA compile per transformed function
    # instead of one per primitive
    want_jvp = jax.jit(lambda a, t: jax.jvp(theirs, a, t))(tuple(args), tangents)
    close(loom.jvp(mine, args, tangents), want_jvp)
    close(loom.jit(lambda *a: loom.jvp(mine, a, tangents))(*args), want_jvp)

    def loss(f):
        return lambda x, y: f(x, y).sum()
    want = jax.jit(jax.grad(loss(theirs), argnums=(0, 1)))(*args)
    close(loom.grad(loss(mine), argnums=(0, 1))(*args), want)
    close(loom.jit(loom.grad(loss(mine), argnums=(0, 1)))(*args), want)
    batched = [np.stack([a, a * 0.5 + 0.1]) for a in args]
    close(loom.vmap(loom.grad(loss(mine)))(*batched), jax.jit(jax.vmap(jax.grad(loss(theirs))))(*batched))
    close(loom.grad(lambda x: loom.grad(loss(mine))(x, args[1]).sum())(args[0]),
          jax.jit(jax.grad(lambda x: jax.grad(loss(theirs))(x, args[1]).sum()))(args[0]))


def test_custom_jvp_in_a_loop_and_with_nondiff_argnums():
    def build(m, np_):
        def fn(power, x):
            return np_.sin(x) ** power
        f = m.custom_jvp(fn, nondiff_argnums=(0,))

        @f.defjvp
        def f_jvp(power, primals, tangents):
            (x,), (t,) = primals, tangents
            return f(power, x), power * np_.sin(x) ** (power - 1) * np_.cos(x) * t * 1.5
        return f
    f_l, f_j = build(loom, lnp), build(jax, jnp)
    x = rand(3)

    def loop(m, f):
        return lambda x: m.lax.fori_loop(0, 3, lambda i, c: f(2, c) + 0.5 * c, x).sum()
    close(loom.grad(loop(loom, f_l))(x), jax.grad(loop(jax, f_j))(x))


def test_nn_relu_is_one_op_forward_and_a_select_backward():
    """loom.nn.relu is a custom_jvp as jax.nn.relu: max(x, 0) forward, select(x > 0) backward."""
    import loom.nn as nn
    x = np.array([-1.0, 0.0, 3.0], np.float32)
    text = loom.jit(loom.value_and_grad(lambda x: nn.relu(x).sum())).lower(x).as_text()
    assert text.count("stablehlo.maximum") == 1 and "stablehlo.select" in text
    np.testing.assert_array_equal(loom.grad(lambda x: nn.relu(x).sum())(x), jax.grad(lambda x: jax.nn.relu(x).sum())(x))
    lowered = loom.jit(nn.relu).lower(x)
    assert '"ad.custom_jvp"' in lowered.as_text(generic=True)
    module = loom.ir.parse(lowered.as_text(generic=True))
    module.verify()
    assert lower_stop_gradients(module) == 1 and "ad.custom_jvp" not in loom.ir.print(module)


@pytest.mark.parametrize("rule, message", [
    (lambda p, t: p[0] * 2.0, "must return a pair \\(primal_out, tangent_out\\)"),
    (lambda p, t: (p[0] * 2.0, lnp.zeros(2)), "returned a tangent of shape \\(2,\\) for output of shape \\(3,\\)"),
    (lambda p, t: (p[0] * 2.0, (t[0], t[0])), "returned a tangent_out with structure"),
])
def test_bad_jvp_rules_are_clear_errors(rule, message):
    @loom.custom_jvp
    def f(x):
        return x * 2.0
    f.defjvp(rule)
    with pytest.raises(TypeError, match=message):
        loom.jvp(f, (rand(3),), (rand(3),))


def test_custom_jvp_before_defjvp_is_an_error():
    @loom.custom_jvp
    def f(x):
        return x
    with pytest.raises(TypeError, match="called before defjvp"):
        loom.jit(f)(rand(3))


def test_closure_convert_lets_a_custom_vjp_differentiate_what_it_closed_over():
    """The pattern JAX documents: closure_convert hoists the closed-over `w` into an argument of
    the custom_vjp function, whose bwd then gives it a cotangent (twice the true one, to show
    that bwd ran), as in JAX."""
    def loss(m, np_):
        def inner(w, x):
            fc, consts = m.closure_convert(lambda x: np_.sin(x * w), x)

            @m.custom_vjp
            def g(x, *consts):
                return fc(x, *consts)

            def bwd(res, ct):
                x, consts = res
                return tuple(2.0 * c for c in m.vjp(fc, x, *consts)[1](ct))
            g.defvjp(lambda x, *consts: (fc(x, *consts), (x, consts)), bwd)
            return np_.sum(g(x, *consts))
        return inner
    w, x = rand(3), rand(3)
    close(loom.grad(loss(loom, lnp), argnums=(0, 1))(w, x), jax.grad(loss(jax, jnp), argnums=(0, 1))(w, x))
    f = lambda x: x * 2.0  # noqa: E731
    assert loom.closure_convert(f, x) == (f, [])  # nothing to hoist outside a trace
