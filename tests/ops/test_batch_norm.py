"""stablehlo.batch_norm_training / batch_norm_inference / batch_norm_grad in every executor: the
spec's examples, XLA's values (every feature index, float16 to float64, epsilon), empty batches."""

from __future__ import annotations

import numpy as np
import pytest
from support.executors import assert_all_close, module
from support.oracles import run_xla

pytestmark = pytest.mark.usefixtures("jax_x64")


def _type(shape, dtype):
    return f"tensor<{''.join(f'{n}x' for n in shape)}{dtype}>"


def _text(name, shape, dtype, feature_index, epsilon):
    x, v = _type(shape, dtype), _type((shape[feature_index],), dtype)
    operands, results = {
        "batch_norm_training": ([x, v, v], [x, v, v]),
        "batch_norm_inference": ([x, v, v, v, v], [x]),
        "batch_norm_grad": ([x, v, v, v, x], [x, v, v]),
    }[name]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    outs = ", ".join(f"%0#{i}" for i in range(len(results))) if len(results) > 1 else "%0"
    count = f":{len(results)}" if len(results) > 1 else ""
    return module(f"""func.func @main({args}) -> ({", ".join(results)}) {{
  %0{count} = "stablehlo.{name}"({names}) {{epsilon = {epsilon} : f32, feature_index = {feature_index} : i64}}
    : ({", ".join(operands)}) -> ({", ".join(results)})
  return {outs} : {", ".join(results)}
}}""")


X = np.array([[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]])


def test_spec_examples():
    ones, mean = np.ones(2), np.array([2.0, 3.0])
    assert_all_close(_text("batch_norm_training", (2, 2, 2), "f64", 2, "0.0"), [X, ones, ones],
                     (np.array([[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]), mean, ones))
    assert_all_close(_text("batch_norm_inference", (2, 2, 2), "f64", 2, "0.0"), [X, ones, ones, mean, ones],
                     np.array([[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]))
    grad_output = np.full((2, 2, 2), 0.1)
    assert_all_close(_text("batch_norm_grad", (2, 2, 2), "f64", 2, "0.0"), [X, ones, mean, ones, grad_output],
                     (np.zeros((2, 2, 2)), np.zeros(2), np.array([0.4, 0.4])))


def _operands(name, shape, dtype, feature_index, rng):
    n = shape[feature_index]
    x = rng.normal(size=shape).astype(dtype)

    def vec(lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, n).astype(dtype)
    if name == "batch_norm_training":
        return [x, vec(), vec()]
    if name == "batch_norm_inference":
        return [x, vec(), vec(), vec(), vec(0.5, 2.0)]
    return [x, vec(), vec(), vec(0.5, 2.0), rng.normal(size=shape).astype(dtype)]


@pytest.mark.parametrize("name", ["batch_norm_training", "batch_norm_inference", "batch_norm_grad"])
@pytest.mark.parametrize("feature_index", [0, 1, 2])
@pytest.mark.parametrize("dtype,mlir,tol", [(np.float64, "f64", 1e-12), (np.float32, "f32", 1e-5),
                                            (np.float16, "f16", 2e-2)])
def test_against_xla(name, feature_index, dtype, mlir, tol):
    shape = (3, 4, 5)
    args = _operands(name, shape, dtype, feature_index, np.random.default_rng(feature_index))
    text = _text(name, shape, mlir, feature_index, "1.000000e-03")
    want = run_xla(text, args)
    assert_all_close(text, args, tuple(want), rtol=tol, atol=tol)


def test_rank_one_operand_and_empty_batch():
    """Feature dimension alone: nothing to reduce (the mean is the operand); an empty batch: the
    statistics of no elements are NaN (0 / 0), as XLA computes them."""
    x = np.array([1.0, -2.0, 3.0])
    text = _text("batch_norm_training", (3,), "f64", 0, "1.000000e-03")
    args = [x, np.ones(3), np.zeros(3)]
    assert_all_close(text, args, tuple(run_xla(text, args)))
    empty = _text("batch_norm_training", (0, 2), "f32", 1, "1.000000e-03")
    args = [np.zeros((0, 2), np.float32), np.ones(2, np.float32), np.zeros(2, np.float32)]
    want = tuple(run_xla(empty, args))
    assert np.isnan(want[1]).all()
    assert_all_close(empty, args, want)
