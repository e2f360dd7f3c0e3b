"""`loom.jit(..., fuse=True)`: the torch executor's generated program compiled by torch.compile
(TorchInductor), against JAX's answers for the same programs; on the CPU here (C++ kernels), on
CUDA where a GPU is present (benchmarks/gpu.py times it)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom.backend.compiled import InductorExecutable  # noqa: E402


def training_step(np_, grad_fn):
    def step(w, b, x, y):
        def loss(w, b):
            h = np_.tanh(x @ w + b)
            return ((h - y) ** 2).mean() + 0.1 * np_.sum(np_.exp(-h) * np_.sin(h))
        value, (gw, gb) = grad_fn(loss, argnums=(0, 1))(w, b)
        return value, w - 0.1 * gw, b - 0.1 * gb
    return step


def test_fused_training_step_matches_jax():
    # Inductor reorders the fp32 reductions (mean, sum): answers agree to rounding, not bit for bit
    rs = np.random.RandomState(0)
    args = [rs.randn(16, 8).astype(np.float32), rs.randn(8).astype(np.float32),
            rs.randn(32, 16).astype(np.float32), rs.randn(32, 8).astype(np.float32)]
    fused = loom.jit(training_step(lnp, loom.value_and_grad), device="torch:cpu", fuse=True)
    got = fused(*args)
    want = jax.jit(training_step(jnp, jax.value_and_grad))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)
    assert str(got[1].device) == "torch:cpu"  # results stay on the device
    assert isinstance(fused.lower(*args).compile().executable, InductorExecutable)
    # the compiled program is kept: new values of the same signature run it again
    args2 = [a + 0.5 for a in args]
    for g, w in zip(fused(*args2), jax.jit(training_step(jnp, jax.value_and_grad))(*args2)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def test_fused_data_dependent_loop_matches_jax():
    # the loop's predicate is read on the host: the program splits into several graphs
    def collatz_steps(lax):
        def f(n, x):
            def cond(c):
                return c[0] != 1

            def body(c):
                m, s, acc = c
                odd = m % 2 == 1
                return (lax.select(odd, 3 * m + 1, m // 2), s + 1, acc * 0.9 + x.sum())
            return lax.while_loop(cond, body, (n, 0, x[0] * 0.0))
        return f

    x = np.linspace(-1, 1, 7).astype(np.float32)
    fused = loom.jit(collatz_steps(loom.lax), device="torch:cpu", fuse=True)
    for n in (27, 6):
        got = fused(np.int32(n), x)
        want = jax.jit(collatz_steps(jax.lax))(np.int32(n), x)
        assert int(got[0]) == int(want[0]) and int(got[1]) == int(want[1])
        np.testing.assert_allclose(np.asarray(got[2]), np.asarray(want[2]), rtol=1e-5, atol=1e-6)


def test_fuse_needs_a_torch_device():
    with pytest.raises(ValueError, match="fuse=True .* needs a torch device"):
        loom.jit(lambda x: x, fuse=True)
    with pytest.raises(ValueError, match="fuse=True .* needs a torch device"):
        loom.jit(lambda x: x, device="cpu", fuse=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (the CPU tests above run everywhere)")
@pytest.mark.parametrize("cuda_graph", [False, True])
def test_fused_on_cuda_matches_jax(cuda_graph):
    rs = np.random.RandomState(1)
    args = [rs.randn(64, 32).astype(np.float32), rs.randn(32).astype(np.float32),
            rs.randn(128, 64).astype(np.float32), rs.randn(128, 32).astype(np.float32)]
    fused = loom.jit(training_step(lnp, loom.value_and_grad), device="cuda", fuse=True, cuda_graph=cuda_graph)
    with jax.default_device(jax.devices("cpu")[0]):
        want = jax.jit(training_step(jnp, jax.value_and_grad))(*args)
    for _ in range(3):  # replays return fresh copies: earlier results must stay intact
        got = fused(*args)
    first = [np.asarray(g) for g in got]
    fused(*[a + 1 for a in args])
    for g, f, w in zip(got, first, want):
        assert "cuda" in str(g.device)
        np.testing.assert_allclose(np.asarray(g), f)
        np.testing.assert_allclose(f, np.asarray(w), rtol=1e-4, atol=1e-5)
