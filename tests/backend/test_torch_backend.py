"""The compiled executor over torch tensors (CPU here): loom.jit / loom.grad programs give the numpy
backend's results; the kernel table's semantics, fallbacks, registration and generated code."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import loom  # noqa: E402
import loom.ir  # noqa: E402
import loom.numpy as lnp  # noqa: E402
import loom.random  # noqa: E402
from loom import lax  # noqa: E402
from loom.backend import torch_kernels as kt  # noqa: E402
from loom.backend.common import ArgumentError  # noqa: E402
from loom.backend.kernels import Kernel  # noqa: E402
from loom.runtime.devices import Array, get_device  # noqa: E402
from loom.runtime.executable import compile as loom_compile  # noqa: E402

TORCH_CPU = "torch:cpu"
rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return rng.normal(size=shape).astype(dtype)


def host(x):
    if isinstance(x, (tuple, list)):
        return type(x)(host(v) for v in x)
    if isinstance(x, dict):
        return {k: host(v) for k, v in x.items()}
    return np.asarray(x)


def assert_tree_close(got, want, tol=1e-5):
    got, want = host(got), host(want)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_tree_close(g, w, tol)
        return
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            assert_tree_close(got[k], want[k], tol)
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fcV":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


# Programs: (name, function, arguments, tolerance) -------------------------------------------------

def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = lnp.tanh(x @ w1 + b1)
    return lnp.mean((h @ w2 + b2 - y) ** 2)


def layer_norm(x, g, b):
    mu = lnp.mean(x, axis=-1, keepdims=True)
    var = lnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / lnp.sqrt(var + 1e-5) * g + b


def attention(q, k, v):
    s = lnp.einsum("qd,kd->qk", q, k) / np.float32(np.sqrt(q.shape[-1]))
    return loom.nn.softmax(s, axis=-1) @ v


def cross_entropy(w, x, labels):
    logits = x @ w
    return -lnp.mean(lnp.take_along_axis(loom.nn.log_softmax(logits), labels[:, None], axis=1))


_params = ((randn(4, 8), randn(8)), (randn(8, 3), randn(3)))
PROGRAMS = [
    ("mlp_value_and_grad", loom.value_and_grad(mlp_loss), (_params, randn(5, 4), randn(5, 3)), 1e-5),
    ("layer_norm_grad", loom.grad(lambda x, g, b: layer_norm(x, g, b).sum(), argnums=(0, 1)),
     (randn(3, 6), randn(6), randn(6)), 1e-4),
    ("attention_grad", loom.grad(lambda q, k, v: attention(q, k, v).sum(), argnums=(0, 1, 2)),
     (randn(4, 8), randn(6, 8), randn(6, 8)), 1e-4),
    ("cross_entropy_grad", loom.grad(cross_entropy), (randn(6, 5), randn(7, 6), np.array([0, 4, 2, 2, 1, 3, 0])),
     1e-5),
    ("second_order", loom.grad(lambda x: loom.grad(lambda y: lnp.sum(lnp.sin(y) * y ** 3))(x).sum()),
     (randn(3),), 1e-4),
    ("grad_fori_loop", loom.grad(lambda x: lax.fori_loop(0, 4, lambda i, a: a * lnp.cos(a) + i, x).sum()),
     (randn(5),), 1e-5),
    ("while_loop_data_dependent", lambda x: lax.while_loop(lambda c: c[1] < 100.0, lambda c: (c[0] + 1, c[1] * 2.0),
                                                           (0, lnp.sum(lnp.abs(x)) + 1.0)), (randn(4),), 1e-6),
    ("grad_scan_rnn", loom.grad(lambda w, xs: lax.scan(lambda h, x: (lnp.tanh(h @ w + x), h.sum()),
                                                       lnp.zeros(3, np.float32), xs)[0].sum()),
     (randn(3, 3), randn(5, 3)), 1e-4),
    ("grad_cond", loom.grad(lambda x, p: lax.cond(p, lambda a: lnp.sin(a).sum(), lambda a: (a * a).sum(), x)),
     (randn(4), np.array(False)), 1e-6),
    ("indexing_and_scatter_grad", loom.grad(lambda x, i: (x[i] ** 2).sum() + x.at[i].add(1.0).max()),
     (randn(6), np.array([0, 3, 3, 5], np.int32)), 1e-5),
    ("sort_cumsum_argmax", lambda x: (lnp.sort(x), lnp.cumsum(x), lnp.argmax(x), lnp.argsort(x)),
     (randn(9),), 1e-5),
    ("vmap_of_grad", loom.vmap(loom.grad(lambda w, x: lnp.sum(lnp.tanh(x @ w))), in_axes=(None, 0)),
     (randn(3, 2), randn(4, 5, 3)), 1e-5),
    ("integer_ops", lambda a, b: (lax.div(a, b), lax.rem(a, b), lnp.floor_divide(a, b), lnp.remainder(a, b),
                                  lax.shift_right_logical(a, b), lnp.maximum(a, b), (a * b).sum()),
     (np.array([7, -7, 9, -3, 0], np.int32), np.array([2, 2, -4, 5, 3], np.int32)), 0),
    ("f16_matmul_relu", lambda x, w: loom.nn.relu(x.astype(np.float16) @ w.astype(np.float16))
     .astype(np.float32), (randn(4, 8), randn(8, 5)), 3e-2),
    ("random_bits_and_normal", lambda k: loom.random.normal(k, (3, 4)), (np.array([0, 7], np.uint32),), 1e-6),
]


@pytest.mark.parametrize("name,fn,args,tol", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_on_torch_matches_numpy(name, fn, args, tol):
    want = loom.jit(fn)(*args)
    got = loom.jit(fn, device=TORCH_CPU)(*args)
    leaves = loom.frontend.pytree.tree_flatten(got)[0]
    assert leaves and all(isinstance(x, Array) and x.device == get_device(TORCH_CPU) for x in leaves)
    assert_tree_close(got, want, tol)


def test_grad_with_torch_tensor_inputs_returns_tensors():
    w, x, y = randn(4, 3), randn(6, 4), randn(6, 3)
    loss = lambda w, x, y: lnp.mean((x @ w - y) ** 2)  # noqa: E731
    got = loom.jit(loom.value_and_grad(loss))(torch.from_numpy(w), torch.from_numpy(x), torch.from_numpy(y))
    assert all(isinstance(v, torch.Tensor) for v in got)
    assert_tree_close(tuple(v.numpy() for v in got), loom.value_and_grad(loss)(w, x, y), 1e-5)


# Kernel semantics on tensors ------------------------------------------------------------------------

def module(body: str, signature: str, results: str) -> str:
    return (f'"builtin.module"() ({{\n  "func.func"() <{{function_type = {signature}, sym_name = "main"}}> ({{\n'
            f'  ^bb0{results}:\n{body}\n  }}) : () -> ()\n}}) : () -> ()\n')


def _run(text: str, *args):
    module = loom.ir.parse(text)
    on_torch = loom_compile(module, backend="torch")(*args)
    on_numpy = loom_compile(module)(*args)
    return on_torch, on_numpy


def test_unsigned_arithmetic_runs_on_signed_views_and_division_of_u64_in_torch():
    u = "tensor<4xui32>"
    text = module(f"""
    %0 = "stablehlo.multiply"(%a, %b) : ({u}, {u}) -> {u}
    %1 = "stablehlo.add"(%0, %a) : ({u}, {u}) -> {u}
    %2 = "stablehlo.compare"(%1, %b) <{{comparison_direction = #stablehlo<comparison_direction LT>}}>
      : ({u}, {u}) -> tensor<4xi1>
    %3 = "stablehlo.divide"(%1, %b) : ({u}, {u}) -> {u}
    "func.return"(%1, %2, %3) : ({u}, tensor<4xi1>, {u}) -> ()""", f"({u}, {u}) -> ({u}, tensor<4xi1>, {u})",
                  f"(%a: {u}, %b: {u})")
    a = np.array([2 ** 31, 7, 2 ** 32 - 1, 0], np.uint32)
    b = np.array([3, 2 ** 30, 2, 9], np.uint32)
    got, want = _run(text, a, b)
    assert got[0].dtype == torch.uint32
    for g, w in zip(got, want):
        np.testing.assert_array_equal(kt.to_numpy(g), w)
    source = loom_compile(loom.ir.parse(text), backend="torch").source
    assert "signed_" in source and "numpy_" not in source
    v = "tensor<3xui64>"
    text64 = module(f"""
    %0 = "stablehlo.divide"(%a, %b) : ({v}, {v}) -> {v}
    "func.return"(%0) : ({v}) -> ()""", f"({v}, {v}) -> {v}", f"(%a: {v}, %b: {v})")
    a64 = np.array([2 ** 64 - 1, 10, 5], np.uint64)
    b64 = np.array([2, 0, 7], np.uint64)
    got, want = _run(text64, a64, b64)
    np.testing.assert_array_equal(kt.to_numpy(got), want)
    np.testing.assert_array_equal(want, [2 ** 63 - 1, 2 ** 64 - 1, 0])
    assert "numpy_" not in loom_compile(loom.ir.parse(text64), backend="torch").source


def test_bf16_round_trips_through_numpy_and_torch():
    x = np.array([1.5, -2.25, 3e38, np.nan], ml_dtypes.bfloat16)
    t = kt.to_torch(x)
    assert t.dtype == torch.bfloat16
    back = kt.to_numpy(t)
    assert back.dtype == x.dtype
    np.testing.assert_array_equal(back.view(np.uint16), x.view(np.uint16))


def test_fallback_results_never_share_memory_with_arguments():
    fallback = kt.NumpyFallback(lambda x: x.reshape(-1)[::-1], None)  # a numpy kernel returning a view
    t = torch.arange(4, dtype=torch.int32)
    out = fallback(t)
    out[0] = 100
    assert t.tolist() == [0, 1, 2, 3]


def test_a_reducer_torch_has_no_reduction_for_runs_as_a_numpy_island():
    text = module("""
    %init = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %0 = "stablehlo.reduce"(%x, %init) <{dimensions = array<i64: 0>}> ({
      ^bb1(%a: tensor<i32>, %b: tensor<i32>):
        %m = "stablehlo.xor"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%m) : (tensor<i32>) -> ()
    }) : (tensor<6xi32>, tensor<i32>) -> tensor<i32>
    "func.return"(%0) : (tensor<i32>) -> ()""", "(tensor<6xi32>) -> tensor<i32>", "(%x: tensor<6xi32>)")
    x = np.array([1, 7, 12, 3, 9, 30], np.int32)
    got, want = _run(text, x)  # torch has no xor reduction: the numpy rule runs on the values
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int32
    assert int(got) == int(want) == int(np.bitwise_xor.reduce(x) ^ 5)
    assert "to_numpy(" in loom_compile(loom.ir.parse(text), backend="torch").source


def test_reduce_window_runs_on_torch():
    text = module("""
    %init = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %0 = "stablehlo.reduce_window"(%x, %init) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
      ^bb1(%a: tensor<f32>, %b: tensor<f32>):
        %m = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%m) : (tensor<f32>) -> ()
    }) : (tensor<6xf32>, tensor<f32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()""", "(tensor<6xf32>) -> tensor<3xf32>", "(%x: tensor<6xf32>)")
    x = np.array([1, 5, -2, -3, 7, 7.5], np.float32)
    got, want = _run(text, x)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(want, [5, -2, 7.5])
    assert "to_numpy(" not in loom_compile(loom.ir.parse(text), backend="torch").source


def test_registered_torch_kernel_is_used(monkeypatch):
    calls = []

    def my_tanh(x):
        calls.append(x.shape)
        return torch.tanh(x)

    monkeypatch.setitem(kt.TORCH_KERNELS, "stablehlo.tanh", lambda op: Kernel(my_tanh))
    text = module("""
    %0 = "stablehlo.tanh"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()""", "(tensor<3xf32>) -> tensor<3xf32>", "(%x: tensor<3xf32>)")
    x = randn(3)
    out = loom.backend.Executable(loom.ir.parse(text), backend="torch")(x)
    assert calls == [torch.Size([3])]
    np.testing.assert_allclose(out.numpy(), np.tanh(x), rtol=1e-6)


def test_generated_torch_code_calls_torch():
    text = module("""
    %0 = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
      rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = "stablehlo.exponential"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    "func.return"(%1) : (tensor<2x4xf32>) -> ()""", "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>",
                  "(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>)")
    exe = loom_compile(loom.ir.parse(text), backend="torch")
    assert "torch_matmul(" in exe.source and "torch_exp(" in exe.source and "numpy" not in exe.source
    x, w = randn(2, 3), randn(3, 4)
    np.testing.assert_allclose(exe(x, w).numpy(), np.exp(x @ w), rtol=1e-5)


def test_results_are_fresh_and_do_not_alias_constants_or_arguments():
    t = "tensor<3xf32>"
    text = module(f"""
    %c = "stablehlo.constant"() <{{value = dense<[1.0, 2.0, 3.0]> : {t}}}> : () -> {t}
    "func.return"(%c, %x) : ({t}, {t}) -> ()""", f"({t}) -> ({t}, {t})", f"(%x: {t})")
    exe = loom_compile(loom.ir.parse(text), backend="torch")
    x = torch.zeros(3)
    c, y = exe(x)
    c[0] = 50.0
    y[0] = 50.0
    c2, _ = exe(x)
    assert c2.tolist() == [1.0, 2.0, 3.0] and x.tolist() == [0.0, 0.0, 0.0]


def test_argument_errors_name_argument_types_and_devices():
    text = module('"func.return"(%x) : (tensor<3xf32>) -> ()', "(tensor<3xf32>) -> tensor<3xf32>",
                  "(%x: tensor<3xf32>)")
    exe = loom_compile(loom.ir.parse(text), backend="torch")
    with pytest.raises(ArgumentError, match=r"argument 0 expected tensor<3xf32>, got torch tensor float64\[3\]"):
        exe(torch.zeros(3, dtype=torch.float64))
    meta = torch.zeros(3, device="meta")
    with pytest.raises(ArgumentError, match="on device meta.*compiled for device cpu"):
        exe(meta)


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="unknown backend 'jax'"):
        loom_compile(module('"func.return"() : () -> ()', "() -> ()", "()"), backend="jax")
    with pytest.raises(ValueError, match="numpy backend runs on the CPU only"):
        loom_compile(module('"func.return"() : () -> ()', "() -> ()", "()"), device="cuda")


def test_programs_that_read_values_on_the_host_are_not_graph_capturable():
    static = loom.jit(lambda w, x: lnp.tanh(x @ w).sum().astype(np.int32), device=TORCH_CPU)
    dynamic = loom.jit(lambda x: lax.while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)),
                       device=TORCH_CPU)
    static(randn(3, 2), randn(4, 3))
    dynamic(np.float32(1.0))
    assert not next(iter(static._cache.values())).executable.reads_values_on_host
    assert next(iter(dynamic._cache.values())).executable.reads_values_on_host
    with pytest.raises(ValueError, match="cuda_graph=True needs device='cuda'"):
        loom.jit(lambda x: x, cuda_graph=True)


# The front end's gradient suite on torch ---------------------------------------------------------

def _gradient_suite() -> list:
    """Every case of the gradient suites (tests/support/gradient_cases.py): (id, function of
    (module, *args), shapes, positive inputs); none where jax, the suites' oracle, is missing."""
    try:
        from support.gradient_cases import SUITES
    except ImportError:  # pragma: no cover - jax is a test extra
        return []
    return [(f"test_{suite}:{c[0]}", c[1], c[2], c[3]) for suite, rows in SUITES.items() for c in rows]


GRADIENT_SUITE = _gradient_suite()


def test_gradient_suite_is_found():
    assert len(GRADIENT_SUITE) >= 100, len(GRADIENT_SUITE)


@pytest.mark.parametrize("name,fn,shapes,positive", GRADIENT_SUITE, ids=[c[0] for c in GRADIENT_SUITE])
def test_gradient_suite_on_torch_matches_numpy(name, fn, shapes, positive):
    gen = np.random.default_rng(0)
    args = [np.asarray(gen.uniform(0.5, 2.0, size=s) if positive else gen.normal(size=s), np.float32)
            for s in shapes]
    g = loom.grad(lambda *a: fn(lnp, *a), tuple(range(len(args))))
    want = loom.jit(g)(*args)
    got = loom.jit(g, device=TORCH_CPU)(*args)
    assert_tree_close(got, want, 1e-5)


@pytest.mark.parametrize("data", ["random", "nan_and_ties"])
def test_select_and_scatter_on_torch_matches_xla_with_nans_and_ties(data):
    jax = pytest.importorskip("jax")
    from jax import lax as jlax

    def pool_grad(x):
        return jax.grad(lambda x: (jlax.reduce_window(x, -np.inf, jlax.max, (3, 3), (2, 1), "SAME") ** 2).sum())(x)

    x = randn(5, 6)
    if data == "nan_and_ties":
        x[1, 2] = x[3, 4] = np.nan
        x[0, :3] = 1.0
        x[4, 4] = x[4, 5] = 2.0
    text = jax.jit(pool_grad).lower(x).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    got, want = _run(text, x)
    assert "select_and_scatter(" in loom_compile(loom.ir.parse(text), backend="torch").source
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_allclose(got.numpy(), np.asarray(jax.jit(pool_grad)(x)), rtol=1e-6, equal_nan=True)
