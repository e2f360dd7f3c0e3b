"""The front end: pytrees, tracing into the IR, and loom.jit, each checked against numpy (and XLA
through jaxlib where the lowered text is run as a second oracle)."""

from __future__ import annotations

import collections
import inspect

import numpy as np
import pytest

import loom.ir as lir
import loom.numpy as lnp
from loom.dialects import func, stablehlo  # noqa: F401 - registers the dialects
from loom.frontend import (
    TracerBoolConversionError,
    jit,
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_unflatten,
)
from loom.frontend.pytree import keystr, tree_flatten_with_path

RNG = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# --- programs ------------------------------------------------------------------------------------


def mlp(params, x):
    h = lnp.tanh(x @ params["w1"] + params["b1"])
    return lnp.maximum(h @ params["w2"] + params["b2"], 0.0)


def mlp_numpy(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return np.maximum(h @ params["w2"] + params["b2"], 0.0)


def softmax(x):
    z = x - lnp.max(x, axis=-1, keepdims=True)
    e = lnp.exp(z)
    return e / lnp.sum(e, axis=-1, keepdims=True)


def softmax_numpy(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, gamma, beta):
    mu = lnp.mean(x, axis=-1, keepdims=True)
    var = lnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / lnp.sqrt(var + 1e-5) * gamma + beta


def layer_norm_numpy(x, gamma, beta):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * gamma + beta


def kitchen_sink(x, y, n):
    z = lnp.where(x[::-1, 1:] > 0, lnp.exp(x[::-1, 1:]), n.astype(lnp.float32))
    b = lnp.matmul(lnp.broadcast_to(z, (2, 3, 3)), lnp.expand_dims(y, 0))
    m = lnp.max(b, axis=(0, 2)) + lnp.min(b, axis=1, keepdims=True).sum() - lnp.mean(y)
    return lnp.concatenate([lnp.squeeze(m[None, :]), lnp.abs(y[:, 0]) ** 1.5, lnp.arange(2.0)])


def kitchen_sink_numpy(x, y, n):
    z = np.where(x[::-1, 1:] > 0, np.exp(x[::-1, 1:]), n.astype(np.float32))
    b = np.matmul(np.broadcast_to(z, (2, 3, 3)), y[None])
    m = b.max(axis=(0, 2)) + b.min(axis=1, keepdims=True).sum() - y.mean()
    return np.concatenate([m, np.abs(y[:, 0]) ** 1.5, np.arange(2.0)]).astype(np.float32)


PARAMS = {"w1": randn(6, 8), "b1": randn(8), "w2": randn(8, 3), "b2": randn(3)}
PROGRAMS = [
    ("mlp", mlp, mlp_numpy, (PARAMS, randn(5, 6))),
    ("softmax", softmax, softmax_numpy, (randn(4, 7),)),
    ("layer_norm", layer_norm, layer_norm_numpy, (randn(3, 10), randn(10), randn(10))),
    ("kitchen_sink", kitchen_sink, kitchen_sink_numpy, (randn(3, 4), randn(3, 2), np.arange(3, dtype=np.int32))),
]


@pytest.mark.parametrize("name,fn,oracle,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_jit_matches_numpy(name, fn, oracle, args):
    out = jit(fn)(*args)
    np.testing.assert_allclose(out, oracle(*args), rtol=1e-5, atol=1e-5)
    assert out.dtype == np.float32


@pytest.mark.parametrize("name,fn,oracle,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_lowered_text_parses_verifies_and_runs_on_xla(name, fn, oracle, args):
    lowered = jit(fn).lower(*args)
    text = lowered.as_text()
    assert "func.func @main" in text
    module = lir.parse(text)
    module.verify()
    assert lir.print(module) == text
    jax = pytest.importorskip("jax")
    import jax.extend as jex
    from jaxlib import xla_client

    backend = jex.backend.get_backend("cpu")
    devs = backend.local_devices()[:1]
    exe = backend.compile_and_load(text, executable_devices=xla_client.DeviceList(tuple(devs)),
                                   compile_options=jex.backend.get_compile_options(num_replicas=1, num_partitions=1))
    leaves, _ = tree_flatten(args)
    outs = exe.execute([jax.device_put(leaf, devs[0]) for leaf in leaves])
    np.testing.assert_allclose(np.asarray(outs[0]), oracle(*args), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(outs[0]), jit(fn)(*args), rtol=1e-5, atol=1e-5)


def test_ops_carry_the_users_source_line():
    def f(x):
        y = lnp.exp(x)  # the marked line
        return y

    line = inspect.getsourcelines(f)[1] + 1
    module = jit(f).lower(randn(3)).module
    locs = [op.location for op in module.walk() if op.name == "stablehlo.exponential"]
    assert locs and locs[0].filename == __file__ and locs[0].line == line


# --- caching and static arguments ------------------------------------------------------------------


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_second_call_with_same_shapes_does_not_retrace():
    traces = []

    def f(x, y):
        traces.append(1)
        return x * y + 1.0

    g = jit(f)
    a, b = randn(2, 3), randn(2, 3)
    np.testing.assert_allclose(g(a, b), a * b + 1.0, rtol=1e-6)
    np.testing.assert_allclose(g(b, a), a * b + 1.0, rtol=1e-6)
    assert len(traces) == 1
    g(randn(4, 3), randn(4, 3))  # new shape
    assert len(traces) == 2
    g(a.astype(np.float64), b.astype(np.float64))  # new dtype
    assert len(traces) == 3
    g(a, b)
    assert len(traces) == 3


def test_static_argnums_and_argnames():
    traces = []

    def f(x, n, *, axis):
        traces.append(n)
        return lnp.sum(x ** n, axis=axis)

    g = jit(f, static_argnums=1, static_argnames="axis")
    x = randn(3, 4)
    np.testing.assert_allclose(g(x, 2, axis=0), (x ** 2).sum(0), rtol=1e-5)
    np.testing.assert_allclose(g(x, 3, axis=1), (x ** 3).sum(1), rtol=1e-5)
    np.testing.assert_allclose(g(x, 2, axis=0), (x ** 2).sum(0), rtol=1e-5)
    assert traces == [2, 3]


def test_decorator_forms_and_lower_compile():
    @jit
    def f(x):
        return x + 1

    @jit(static_argnums=(1,))
    def g(x, k):
        return x * k

    x = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(f(x), x + 1)
    assert f(x).dtype == np.int32  # weak int constant keeps int32
    np.testing.assert_array_equal(g(x, 3), x * 3)
    compiled = f.lower(x).compile()
    np.testing.assert_array_equal(compiled(x), x + 1)


def test_python_scalar_arguments_are_weak():
    f = jit(lambda x, s: x * s)
    x = randn(3)
    out = f(x, 2.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, x * 2)


# --- pytrees -----------------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    def __init__(self, a, b, label):
        self.a, self.b, self.label = a, b, label


register_pytree_node(Box, lambda box: ((box.a, box.b), box.label), lambda label, ch: Box(ch[0], ch[1], label))


def test_pytree_flatten_unflatten():
    tree = {"b": [1, (2, None)], "a": Point(3, {"z": 4, "y": 5}), "c": Box(6, 7, "lbl")}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [3, 5, 4, 1, 2, 6, 7]  # dict keys sorted, None has no leaves
    back = tree_unflatten(treedef, leaves)
    assert back["a"] == Point(3, {"y": 5, "z": 4}) and back["b"] == [1, (2, None)]
    assert isinstance(back["c"], Box) and back["c"].label == "lbl" and (back["c"].a, back["c"].b) == (6, 7)
    assert tree_flatten(tree_map(lambda v: v * 10, tree))[0] == [v * 10 for v in leaves]
    assert tree_flatten({"a": 1, "b": 2})[1] != tree_flatten({"a": 1, "c": 2})[1]
    assert tree_flatten([1, 2])[1] != tree_flatten((1, 2))[1]
    paths = [keystr(p) for p, _ in tree_flatten_with_path(tree)[0]]
    assert paths == ["['a'].x", "['a'].y['y']", "['a'].y['z']", "['b'][0]", "['b'][1][0]", "['c'][0]", "['c'][1]"]


def test_pytree_inputs_and_outputs_through_jit():
    def f(inputs):
        p, d = inputs
        return {"sum": p.x + p.y, "parts": [d["u"] * 2, None], "box": Box(d["v"], -d["v"], "k")}

    a, b, u, v = randn(3), randn(3), randn(2), randn(4)
    out = jit(f)((Point(a, b), {"u": u, "v": v}))
    np.testing.assert_allclose(out["sum"], a + b)
    np.testing.assert_allclose(out["parts"][0], u * 2)
    assert out["parts"][1] is None
    assert isinstance(out["box"], Box) and out["box"].label == "k"
    np.testing.assert_allclose(out["box"].b, -v)


# --- errors ------------------------------------------------------------------------------------------


def test_bool_of_tracer_names_lax_cond_and_while_loop():
    def f(x):
        if lnp.sum(x) > 0:
            return x
        return -x

    with pytest.raises(TracerBoolConversionError, match="lax.cond") as info:
        jit(f)(randn(3))
    assert "lax.while_loop" in str(info.value)


def test_non_array_input_names_its_pytree_path():
    def f(params, x):
        return x

    with pytest.raises(TypeError, match=r"params\['a'\]\[1\]") as info:
        jit(f)({"a": [randn(2), "oops"]}, randn(2))
    assert "str" in str(info.value)


def test_matmul_shape_mismatch_names_both_shapes_and_the_line():
    def f(a, b):
        return a @ b

    line = inspect.getsourcelines(f)[1] + 1
    with pytest.raises(ValueError) as info:
        jit(f)(randn(2, 3), randn(4, 5))
    message = str(info.value)
    assert "(2, 3)" in message and "(4, 5)" in message
    assert f"{__file__}:{line}" in message


def test_nested_jit_inlines():
    inner = jit(lambda x: x * 2)
    outer = jit(lambda x: inner(x) + 1)
    x = randn(3)
    np.testing.assert_allclose(outer(x), x * 2 + 1, rtol=1e-6)


def test_numpy_constants_on_either_side_and_dynamic_kwargs():
    c = np.arange(3, dtype=np.float32)

    def f(x, *, scale):
        return c * x + np.float32(2) - c @ x, x * scale

    x, s = randn(3), randn(3)
    out = jit(f)(x, scale=s)
    np.testing.assert_allclose(out[0], c * x + 2 - c @ x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], x * s, rtol=1e-6)


def test_constant_outputs_and_leaves_passed_through():
    out = jit(lambda x: (x, 3.0, lnp.zeros(2)))(randn(2))
    assert out[1].dtype == np.float32 and float(out[1]) == 3.0
    np.testing.assert_array_equal(out[2], np.zeros(2, np.float32))


def test_leaked_tracer_is_an_error():
    from loom.frontend import TracerError

    leaked = []

    def f(x):
        leaked.append(x)
        return x + 1

    jit(f)(randn(2))
    with pytest.raises(TracerError, match="leaked"):
        jit(lambda y: leaked[0] + y)(randn(2))
    with pytest.raises(TracerError, match="leaked"):
        jit(lambda y: y + leaked[0])(randn(2))
    with pytest.raises(TracerError, match="outside the function that traced it"):
        lnp.exp(leaked[0])


def test_lower_on_abstract_shapes():
    class Spec:
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, dtype

    lowered = jit(softmax).lower(Spec((2, 5), np.float32))
    assert "tensor<2x5xf32>" in lowered.as_text()
    x = randn(2, 5)
    np.testing.assert_allclose(lowered.compile()(x), softmax_numpy(x), rtol=1e-5)
    with pytest.raises(TypeError, match="not a valid loom array type"):
        jit(softmax)(Spec((2, 5), np.float32))
