"""loom.jit: the default pipeline, the flat-argument fast path and its cache, donate_argnums (numpy
and torch buffers reused for outputs, donated loom.Arrays deleted)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import loom
import loom.frontend.jit
import loom.numpy as lnp

jit_module = sys.modules["loom.frontend.jit"]

rng = np.random.default_rng(1)


def randn(*shape):
    return rng.normal(size=shape).astype(np.float32)


def test_default_pipeline_is_a_module_constant_with_the_four_passes():
    for name in ("inline", "canonicalize", "cse", "dce"):
        assert name in jit_module.DEFAULT_PIPELINE
    from loom.rewrite import PassManager
    PassManager.parse(jit_module.DEFAULT_PIPELINE)  # parses as a pipeline


def test_pipeline_removes_dead_and_duplicate_work():
    def f(x):
        unused = lnp.exp(x) * 3.0  # noqa: F841 - dead: dce removes it
        return lnp.sin(x) + lnp.sin(x)  # cse shares the sines

    text = loom.jit(f).lower(randn(3)).as_text()
    assert text.count("stablehlo.sine") == 1 and "exponential" not in text
    x = randn(3)
    np.testing.assert_allclose(loom.jit(f)(x), 2 * np.sin(x), rtol=1e-6)


def test_fast_path_caches_per_shape_and_dtype():
    f = loom.jit(lambda x, y: x * y + 1.0)
    a, b = randn(4), randn(4)
    np.testing.assert_allclose(f(a, b), a * b + 1, rtol=1e-6)
    assert len(f._fast_numpy) == 1
    np.testing.assert_allclose(f(a, b), a * b + 1, rtol=1e-6)  # the fast path
    c, d = randn(2, 3), randn(2, 3)
    np.testing.assert_allclose(f(c, d), c * d + 1, rtol=1e-6)  # a new shape compiles again
    i = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(f(i, i), i * i + 1)  # and a new dtype
    assert len(f._cache) == 3 and len(f._fast_numpy) == 3
    out = f(a, b)
    out[0] = 123.0  # results are the caller's: the next call is unaffected
    np.testing.assert_allclose(f(a, b), a * b + 1, rtol=1e-6)


def test_fast_path_still_checks_mixed_arguments():
    f = loom.jit(lambda x, y: x + y)
    a = randn(3)
    f(a, a)
    np.testing.assert_allclose(f(a, 2.0), a + 2, rtol=1e-6)  # a Python scalar takes the full path
    with pytest.raises(TypeError, match="not a valid loom array type"):
        f(a, "text")


def test_donated_numpy_buffer_receives_the_result():
    def sgd(w, g):
        return w - 0.5 * g

    f = loom.jit(sgd, donate_argnums=0)
    w, g = randn(5), randn(5)
    expected = w - 0.5 * g
    out = f(w, g)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out is w  # written in place: no new buffer
    assert "donated buffer" in next(iter(f._cache.values())).executable.source
    out2 = f(out, g)  # the fast path donates too
    assert out2 is w
    np.testing.assert_allclose(out2, expected - 0.5 * g, rtol=1e-6)


def test_donation_keeps_results_correct_when_the_buffer_is_still_needed():
    def f(w, x):
        return w * 2.0, lnp.sum(w) + x  # w is read by the sum after the product: no reuse there

    jitted = loom.jit(f, donate_argnums=0)
    w, x = randn(4), randn(4)
    a, b = jitted(w.copy(), x)
    np.testing.assert_allclose(a, w * 2, rtol=1e-6)
    np.testing.assert_allclose(b, w.sum() + x, rtol=1e-5)


def test_donation_does_not_write_into_a_view_that_is_returned():
    def f(w):
        return w * 3.0, w.reshape(2, 2)

    jitted = loom.jit(f, donate_argnums=0)
    w = randn(4)
    a, b = jitted(w.copy())
    np.testing.assert_allclose(a, w * 3, rtol=1e-6)
    np.testing.assert_array_equal(b, w.reshape(2, 2))


def test_donating_an_argument_passed_twice_is_an_error():
    f = loom.jit(lambda w, g: w - g, donate_argnums=0)
    w = randn(3)
    with pytest.raises(ValueError, match="argument w is donated"):
        f(w, w)


def test_static_arguments_cannot_be_donated():
    with pytest.raises(ValueError, match="static arguments cannot be donated"):
        loom.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1)


def test_donated_loom_array_is_deleted_and_torch_buffer_reused():
    torch = pytest.importorskip("torch")
    from loom.runtime.devices import device_put
    f = loom.jit(lambda w, g: w - 0.1 * g, donate_argnums=0)
    w, g = randn(6), randn(6)
    a = device_put(w, "torch:cpu")
    buffer = a.torch()
    out = f(a, device_put(g, "torch:cpu"))
    np.testing.assert_allclose(np.asarray(out), w - 0.1 * g, rtol=1e-6)
    assert out.torch().data_ptr() == buffer.data_ptr()
    assert a.is_deleted()
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(a)
    with pytest.raises(RuntimeError, match="donated"):
        f(a, device_put(g, "torch:cpu"))
    t = torch.from_numpy(w.copy())
    res = f(t, torch.from_numpy(g))
    assert res.data_ptr() == t.data_ptr()
    np.testing.assert_allclose(res.numpy(), w - 0.1 * g, rtol=1e-6)


def test_torch_fast_path_caches_per_device_signature():
    torch = pytest.importorskip("torch")
    f = loom.jit(lambda x: x * x)
    t = torch.arange(3, dtype=torch.float32)
    for _ in range(3):
        np.testing.assert_array_equal(f(t).numpy(), [0, 1, 4])
    assert len(f._fast_device) == 1 and len(f._cache) == 1


def test_fast_path_moves_numpy_arguments_to_the_pinned_device():
    pytest.importorskip("torch")
    from loom.runtime.devices import Array
    f = loom.jit(lambda x, y: lnp.exp(x) - y, device="torch:cpu")
    a, b = randn(5), randn(5)
    first = f(a, b)
    assert len(f._fast_numpy) == 1
    second = f(a, b)  # the fast path: converted to tensors, results wrapped
    for out in (first, second):
        assert isinstance(out, Array)
        np.testing.assert_allclose(np.asarray(out), np.exp(a) - b, rtol=1e-6)


def test_compiled_function_gets_the_fused_knn_kernel() -> None:
    """approx_max_k of a matmul written inside jit runs as knn.fused_score_top_k; the lowered
    (pre-execution) module keeps the two ops, so transformations see the program as written."""
    from loom import lax
    rng = np.random.default_rng(0)
    q = rng.standard_normal((16, 8)).astype(np.float32)
    db = rng.standard_normal((500, 8)).astype(np.float32)
    f = loom.jit(lambda q, db: lax.approx_max_k(q @ db.T, 5, recall_target=1.0))
    lowered = f.lower(q, db)
    assert "knn.fused_score_top_k" in lowered.compile().as_text()
    assert "knn.fused_score_top_k" not in lowered.as_text() and "dot_general" in lowered.as_text()
    values, indices = f(q, db)
    scores = q @ db.T
    expected = np.argsort(-scores, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_allclose(values, np.take_along_axis(scores, expected, 1), rtol=1e-5)
    g = loom.grad(lambda q: lnp.sum(f(q, db)[0]))(q)  # grad of the jitted function: the unfused IR
    np.testing.assert_allclose(g, db[expected].sum(1), rtol=1e-5)


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_numpy_scalars_keep_their_dtype() -> None:
    """np.float64 subclasses float, but a numpy scalar is strongly typed (as in JAX): it is not a
    weak float32 Python scalar."""
    f = loom.jit(lambda x, s: x * s)
    x = np.ones(3)
    out = f(x, np.float64(0.1))
    assert out.dtype == np.float64 and out[0] == 0.1
    assert f(np.ones(3, np.float32), np.float64(0.1)).dtype == np.float64
    assert f(np.ones(3, np.float32), 0.1).dtype == np.float32
    assert "tensor<f64>" in f.lower(x, np.float64(0.1)).as_text()


def test_tree_fast_path_for_dicts_of_numpy_arrays():
    def step(params, x):
        h = lnp.tanh(x @ params["w"] + params["b"])
        return {"w": params["w"] - 0.1 * h.sum(), "b": params["b"] * 2.0}, h.sum()

    def expected(params, x):
        h = np.tanh(x @ params["w"] + params["b"])
        return {"w": params["w"] - 0.1 * h.sum(), "b": params["b"] * 2.0}, h.sum()

    f = loom.jit(step)
    params, x = {"w": randn(3, 2), "b": randn(2)}, randn(4, 3)
    for _ in range(2):  # the first call compiles and registers the tree; the second takes the fast path
        out, total = f(params, x)
        want, want_total = expected(params, x)
        assert set(out) == {"w", "b"}
        np.testing.assert_allclose(out["w"], want["w"], rtol=1e-5)
        np.testing.assert_allclose(out["b"], want["b"], rtol=1e-6)
        np.testing.assert_allclose(total, want_total, rtol=1e-5)
    assert len(f._fast_tree) == 1 and len(f._cache) == 1
    # another shape, dtype or structure is another signature
    f(params, randn(5, 3))
    assert len(f._fast_tree) == 2 and len(f._cache) == 2
    with pytest.raises(KeyError):
        f({"w": params["w"]}, x)  # no "b": the general path runs (and the trace fails)
    assert len(f._fast_tree) == 2
    # a Python scalar or a string leaf takes the general path: weak types and the error naming the leaf
    with pytest.raises(TypeError, match=r"params\['b'\]"):
        f({"w": params["w"], "b": "text"}, x)
    out, _ = f({"w": params["w"], "b": 1.0}, x)
    np.testing.assert_allclose(out["b"], 2.0, rtol=1e-6)
    assert out["b"].dtype == np.float32


def test_tree_fast_path_checks_donation():
    f = loom.jit(lambda p, q: {"w": p["w"] - 0.5 * q["w"]}, donate_argnums=0)
    g = {"w": randn(4)}
    for _ in range(2):  # compiles, then takes the fast path
        p = {"w": randn(4)}
        want = p["w"] - 0.5 * g["w"]
        out = f(p, g)  # p's buffer may receive the result
        np.testing.assert_allclose(out["w"], want, rtol=1e-6)
    assert len(f._fast_tree) == 1
    with pytest.raises(ValueError, match="donated"):
        f(g, g)  # the fast path's check: a donated argument passed twice


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_numpy_scalar_constants_in_traced_code_are_strongly_typed() -> None:
    """A numpy scalar written in traced code promotes like an array of its dtype (as in JAX with
    64-bit types on); a Python float stays weak."""
    import jax
    x = np.ones(2, np.float32)
    with jax.enable_x64(True):
        expected = jax.jit(lambda x: x * np.float64(0.1))(x)
    out = loom.jit(lambda x: x * np.float64(0.1))(x)
    assert out.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(out, np.asarray(expected))
    assert loom.jit(lambda x: x * 0.1)(x).dtype == np.float32


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_donated_buffer_saved_on_a_stack_is_not_overwritten(backend):
    # A value pushed onto a stack is held by reference until popped: a donated parameter pushed
    # (directly, or as a loop's carry) must keep its buffer even when its last direct read is the
    # push, or the pop after the overwrite would return the new contents.
    if backend == "torch":
        pytest.importorskip("torch")
    t = "tensor<3xf32>"
    text = f"""module {{
  "func.func"() <{{function_type = ({t}) -> ({t}, {t}), sym_name = "main"}}> ({{
  ^bb0(%x: {t}):
    %s = "stack.new"() : () -> !stack.stack<{t}>
    "stack.push"(%s, %x) : (!stack.stack<{t}>, {t}) -> ()
    %y = "stablehlo.add"(%x, %x) : ({t}, {t}) -> {t}
    %z = "stack.pop"(%s) : (!stack.stack<{t}>) -> {t}
    "func.return"(%y, %z) : ({t}, {t}) -> ()
  }}) : () -> ()
}}"""
    from loom.backend.compiled import Executable
    exe = Executable(loom.ir.parse(text), "main", backend=backend, donate=(0,))
    assert "donated buffer" not in exe.source
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y, z = (np.asarray(v) for v in exe(x.copy()))
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(z, x)
    if backend == "torch":
        assert exe.reads_values_on_host  # stacks are host-side lists: no CUDA graph capture
