"""stablehlo.rng in every executor: shapes, dtypes and bounds (the spec's example), the
distributions by statistical tests (Kolmogorov-Smirnov against the uniform and normal laws,
chi-square over integer values), and loom's determinism rule (the spec leaves it to the
implementation): a fresh program repeats its numbers, every executor draws the same ones, each
call of one program draws new ones (hidden state), two rng ops draw independent streams."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from support.executors import EXECUTORS, module, run_all, to_numpy

import loom
from loom.backend.common import ExecutionError


def _stats():
    """scipy.stats, imported by the tests that use it: at the top of the module every pytest worker
    would import it (a second or two) while collecting."""
    import scipy.stats
    return scipy.stats


def _rng(distribution, dtype, shape, count=1):
    t = f"tensor<{''.join(f'{n}x' for n in shape)}{dtype}>"
    attr = f"#stablehlo<rng_distribution {distribution}>"
    ops = "\n".join(f"""  %r{i} = "stablehlo.rng"(%a, %b, %shape) {{rng_distribution = {attr}}}
    : (tensor<{dtype}>, tensor<{dtype}>, tensor<{len(shape)}xi64>) -> {t}""" for i in range(count))
    results = ", ".join(f"%r{i}" for i in range(count))
    return module(f"""func.func @main(%a: tensor<{dtype}>, %b: tensor<{dtype}>) -> ({", ".join([t] * count)}) {{
  %shape = stablehlo.constant dense<{list(shape)}> : tensor<{len(shape)}xi64>
{ops}
  return {results} : {", ".join([t] * count)}
}}""")


def test_spec_example_shape_dtype_bounds_and_executors_agree():
    outs = run_all(_rng("UNIFORM", "i32", (3, 3)), [np.int32(0), np.int32(2)])
    for out in outs:
        assert out.shape == (3, 3) and out.dtype == np.int32
        assert set(np.unique(out)) <= {0, 1}
        np.testing.assert_array_equal(out, outs[0])


@pytest.mark.parametrize("dtype,np_dtype", [("f32", np.float32), ("f64", np.float64), ("bf16", None)])
def test_uniform_floats(dtype, np_dtype):
    a, b = -2.0, 3.0
    np_dtype = np_dtype or ml_dtypes.bfloat16
    (x,) = [to_numpy(loom.execute(_rng("UNIFORM", dtype, (20000,)), np_dtype(a), np_dtype(b)))]
    assert x.dtype == np.dtype(np_dtype) and x.shape == (20000,)
    assert x.min() >= a and x.max() < b
    tol = 0.02 if dtype == "bf16" else 0.0
    assert _stats().kstest(x.astype(np.float64), "uniform", args=(a, b - a)).statistic < 0.015 + tol


def test_uniform_never_reaches_b_after_rounding():
    """In float16, most draws near 1 round to 1.0: loom gives the largest float16 below it."""
    x = to_numpy(loom.execute(_rng("UNIFORM", "f16", (50000,)), np.float16(0.0), np.float16(1.0)))
    assert x.max() < 1.0 and x.max() == np.nextafter(np.float16(1), np.float16(0))


def test_normal():
    x = to_numpy(loom.execute(_rng("NORMAL", "f32", (20000,)), np.float32(1.5), np.float32(0.5)))
    assert x.dtype == np.float32
    assert _stats().kstest(x.astype(np.float64), "norm", args=(1.5, 0.5)).pvalue > 1e-3
    assert abs(x.mean() - 1.5) < 0.02 and abs(x.std() - 0.5) < 0.02


@pytest.mark.parametrize("dtype,np_dtype", [("i8", np.int8), ("ui16", np.uint16), ("i64", np.int64)])
def test_uniform_integers(dtype, np_dtype):
    a, b = (-3, 4) if np.dtype(np_dtype).kind == "i" else (5, 12)
    x = to_numpy(loom.execute(_rng("UNIFORM", dtype, (14000,)), np_dtype(a), np_dtype(b)))
    assert x.dtype == np_dtype
    values, counts = np.unique(x, return_counts=True)
    np.testing.assert_array_equal(values, np.arange(a, b))
    assert _stats().chisquare(counts).pvalue > 1e-3


def test_hidden_state_and_fresh_programs():
    text = _rng("UNIFORM", "f32", (8,), count=2)
    args = [np.float32(0), np.float32(1)]
    program = loom.compile(loom.ir.parse(text))
    first, second = program(*args), program(*args)
    assert not np.array_equal(first[0], second[0])  # each call draws new numbers
    assert not np.array_equal(first[0], first[1])  # two ops, two streams
    again = loom.compile(loom.ir.parse(text))(*args)  # a fresh program starts over
    np.testing.assert_array_equal(again[0], first[0])
    interpreted = loom.compile(loom.ir.parse(text), executor="interpreter")
    for want in (first, second):  # the interpreter draws the same sequence
        np.testing.assert_array_equal(interpreted(*args)[0], want[0])
    for out in run_all(text, args):
        np.testing.assert_array_equal(out[1], first[1])


@pytest.mark.parametrize("distribution,a,b,words", [("UNIFORM", 1.0, 1.0, "a < b"), ("NORMAL", 0.0, -1.0,
                                                                                      "must not be negative")])
def test_undefined_parameters_name_the_op(distribution, a, b, words):
    text = _rng(distribution, "f32", (2,))
    for ex, be in EXECUTORS:
        with pytest.raises(ExecutionError, match="stablehlo.rng") as info:
            loom.execute(text, np.float32(a), np.float32(b), executor=ex, backend=be)
        assert words in str(info.value) and "loc(" in str(info.value)
