"""grad, value_and_grad, vjp, jvp, vmap and linearize called outside jit run where their arguments
live, as JAX places work: loom.Arrays on a torch device give loom.Arrays on that device (raw
torch tensors give raw tensors, as jit does), numpy arrays give numpy arrays; the values equal
the host results and jax's. Exercised on torch's CPU device."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
torch = pytest.importorskip("torch")

from loom.runtime.devices import Array, Device, device_put  # noqa: E402

TORCH_CPU = Device("cpu", 0, "torch")
RNG = np.random.default_rng(3)
W = RNG.standard_normal((5, 3)).astype(np.float32)
X = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal((3,)).astype(np.float32)


def on_device(x):
    return device_put(x, "torch:cpu")


def check_on_device(got, host_result, jax_result, rtol=1e-5):
    """`got` is a loom.Array on torch:cpu equal to the host result and to jax's."""
    assert isinstance(got, Array), type(got)
    assert got.device == TORCH_CPU
    assert got.dtype == np.asarray(host_result).dtype
    np.testing.assert_allclose(np.asarray(got), host_result, rtol=1e-5, atol=1e-6)  # torch vs numpy kernels
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax_result), rtol=rtol, atol=1e-6)


def check_on_host(got, jax_result, rtol=1e-5):
    assert type(got) is np.ndarray, type(got)
    np.testing.assert_allclose(got, np.asarray(jax_result), rtol=rtol, atol=1e-6)


def loss(m):
    return lambda params, x: m.mean(m.tanh(x @ params["w"] + params["b"]) ** 2) + 0.1 * m.sum(params["w"] ** 2)


def test_grad_and_value_and_grad_stay_on_the_device():
    params = {"w": W, "b": B}
    jgrad = jax.grad(loss(jnp))(params, X)
    host = loom.grad(loss(lnp))(params, X)
    for leaf, want in zip(host.values(), jgrad.values()):
        check_on_host(leaf, want)
    dev_params = {"w": on_device(W), "b": on_device(B)}
    got = loom.grad(loss(lnp))(dev_params, on_device(X))
    assert set(got) == {"w", "b"}
    for k in got:
        check_on_device(got[k], host[k], jgrad[k])
    # argnums over both arguments, and the value
    (value, grads) = loom.value_and_grad(loss(lnp), argnums=(0, 1))(dev_params, on_device(X))
    jvalue, jgrads = jax.value_and_grad(loss(jnp), argnums=(0, 1))(params, X)
    hvalue, hgrads = loom.value_and_grad(loss(lnp), argnums=(0, 1))(params, X)
    check_on_device(value, hvalue, jvalue)
    check_on_device(grads[1], hgrads[1], jgrads[1])
    check_on_device(grads[0]["w"], hgrads[0]["w"], jgrads[0]["w"])


def test_grad_with_aux_on_the_device():
    def fn(m):
        return lambda w, x: (m.sum(m.sin(x @ w)), {"pred": x @ w})

    g, aux = loom.grad(fn(lnp), has_aux=True)(on_device(W), on_device(X))
    hg, haux = loom.grad(fn(lnp), has_aux=True)(W, X)
    jg, jaux = jax.grad(fn(jnp), has_aux=True)(W, X)
    check_on_device(g, hg, jg)
    check_on_device(aux["pred"], haux["pred"], jaux["pred"])


def test_committed_argument_decides_and_host_values_follow():
    """One argument on the device and one numpy array: the computation runs on the device, as
    jit places it; numpy arrays and scalars go where the computation goes."""
    fn = loss(lnp)
    got = loom.grad(fn)({"w": on_device(W), "b": B}, X)
    host = loom.grad(fn)({"w": W, "b": B}, X)
    jgrad = jax.grad(loss(jnp))({"w": W, "b": B}, X)
    check_on_device(got["w"], host["w"], jgrad["w"])
    check_on_device(got["b"], host["b"], jgrad["b"])
    scaled = loom.grad(lambda w, s: lnp.sum(lnp.sin(w) * s))(on_device(W), 2.5)
    check_on_device(scaled, loom.grad(lambda w, s: lnp.sum(lnp.sin(w) * s))(W, 2.5), 2.5 * np.cos(W))


def test_vjp_outputs_and_cotangents_stay_on_the_device():
    def fn(m):
        return lambda w, x: (m.tanh(x @ w), m.sum(w))

    out, vjp_fn = loom.vjp(fn(lnp), on_device(W), on_device(X))
    hout, hvjp = loom.vjp(fn(lnp), W, X)
    jout, jvjp = jax.vjp(fn(jnp), W, X)
    check_on_device(out[0], hout[0], jout[0])
    check_on_device(out[1], hout[1], jout[1])
    ct = (RNG.standard_normal((4, 3)).astype(np.float32), np.float32(0.5))
    want = jvjp(ct)
    host = hvjp(ct)
    for cotangent in (ct, (on_device(ct[0]), ct[1])):  # numpy or device cotangents
        got = vjp_fn(cotangent)
        assert len(got) == 2
        check_on_device(got[0], host[0], want[0])
        check_on_device(got[1], host[1], want[1])


def test_jvp_stays_on_the_device():
    def fn(m):
        return lambda x: m.exp(m.sin(x)) * x

    t = RNG.standard_normal(X.shape).astype(np.float32)
    jout, jt = jax.jvp(fn(jnp), (X,), (t,))
    hout, ht = loom.jvp(fn(lnp), (X,), (t,))
    check_on_host(hout, jout)
    for tangent in (t, on_device(t)):
        out, tangent_out = loom.jvp(fn(lnp), (on_device(X),), (tangent,))
        check_on_device(out, hout, jout)
        check_on_device(tangent_out, ht, jt)


def test_vmap_stays_on_the_device():
    def fn(m):
        return lambda row, w, b: m.tanh(row @ w + b)

    want = jax.vmap(fn(jnp), in_axes=(0, None, None))(X, W, B)
    host = loom.vmap(fn(lnp), in_axes=(0, None, None))(X, W, B)
    check_on_host(host, want)
    got = loom.vmap(fn(lnp), in_axes=(0, None, None))(on_device(X), on_device(W), B)
    check_on_device(got, host, want)
    # per-example gradients: vmap of grad, all on the device
    per_example = loom.vmap(loom.grad(lambda row, w: lnp.sum(lnp.sin(row @ w))), in_axes=(0, None))
    jper = jax.vmap(jax.grad(lambda row, w: jnp.sum(jnp.sin(row @ w))), in_axes=(0, None))(X, W)
    check_on_device(per_example(on_device(X), on_device(W)), per_example(X, W), jper)


def test_linearize_keeps_residuals_and_tangents_on_the_device():
    def fn(m):
        return lambda x: m.sin(x) * m.exp(x)

    t = RNG.standard_normal(X.shape).astype(np.float32)
    jout, jf = jax.linearize(fn(jnp), X)
    hout, hf = loom.linearize(fn(lnp), X)
    out, f_jvp = loom.linearize(fn(lnp), on_device(X))
    check_on_device(out, hout, jout)
    check_on_device(f_jvp(t), hf(t), jf(t))
    check_on_device(f_jvp(on_device(t)), hf(t), jf(t))


def test_raw_torch_tensors_give_raw_tensors_as_jit_does():
    fn = lambda x: lnp.sum(lnp.sin(x) * x)  # noqa: E731
    tensor = torch.from_numpy(X.copy())
    for got in (loom.grad(fn)(tensor), loom.jit(loom.grad(fn))(tensor)):
        assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
        np.testing.assert_allclose(got.numpy(), np.asarray(jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(X)),
                                   rtol=1e-5, atol=1e-6)
    batched = loom.vmap(lambda r: lnp.sum(r * r))(tensor)
    assert isinstance(batched, torch.Tensor)
    np.testing.assert_allclose(batched.numpy(), (X * X).sum(axis=1), rtol=1e-5)


def test_jit_of_grad_and_grad_agree_on_placement():
    fn = lambda w, x: lnp.sum(lnp.tanh(x @ w))  # noqa: E731
    eager = loom.grad(fn)(on_device(W), on_device(X))
    jitted = loom.jit(loom.grad(fn))(on_device(W), on_device(X))
    assert isinstance(eager, Array) and isinstance(jitted, Array)
    assert eager.device == jitted.device == TORCH_CPU
    np.testing.assert_allclose(np.asarray(eager), np.asarray(jitted), rtol=1e-6, atol=1e-7)


def test_one_transformed_function_serves_host_and_device_calls():
    """The transformed module is traced once per signature; each device gets its own executable,
    so host and device calls alternate without mixing placements."""
    g = loom.grad(lambda w: lnp.sum(lnp.sin(w) ** 2))
    want = np.sin(2 * W)
    for _ in range(2):
        check_on_host(g(W), want)
        check_on_device(g(on_device(W)), g(W), want)


def test_arguments_on_two_devices_are_an_error():
    """A numpy (host) value is never committed; two committed devices are what conflicts. With
    only one torch device here, the error comes from loom.Arrays on torch:cpu mixed with a
    pinned jit of another device."""
    f = loom.jit(loom.grad(lambda w: lnp.sum(w * w)), device="cpu")
    from loom.backend.common import ArgumentError
    with pytest.raises(ArgumentError, match="is on device torch:cpu"):
        f(on_device(W))
