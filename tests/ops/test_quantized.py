"""Quantized tensors in both executors and the torch backend: the spec's examples of
uniform_quantize / uniform_dequantize and of its interpreter's tests (stablehlo/tests/interpret/
quantized_ops.mlir), and the ops the spec defines on quantized tensors by dequantize_op_quantize
against that definition written out in numpy (the spec's `quantize` and `dequantize`)."""

from __future__ import annotations

import numpy as np
import pytest
from support.executors import run_everywhere


def spec_quantize(x, scale, zero_point, lo=-128, hi=127, dtype=np.int8):
    """The spec's `quantize`, per-tensor, in float32."""
    x = np.asarray(x, np.float32)
    return np.rint(np.clip(x / np.float32(scale) + np.float32(zero_point), lo, hi)).astype(dtype)


def spec_dequantize(q, scale, zero_point):
    return (np.asarray(q, np.int64) - zero_point).astype(np.float32) * np.float32(scale)


PER_AXIS = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"


def test_uniform_quantize_spec_example():
    text = f"""func.func @main(%a: tensor<2xf32>) -> tensor<2xi8> {{
  %0 = "stablehlo.uniform_quantize"(%a) : (tensor<2xf32>) -> tensor<2x{PER_AXIS}>
  %1 = "stablehlo.bitcast_convert"(%0) : (tensor<2x{PER_AXIS}>) -> tensor<2xi8>
  return %1 : tensor<2xi8>
}}"""
    for where, got in run_everywhere(text, np.array([4.0, 15.0], np.float32)):
        assert got.tolist() == [10, 10], where


def test_uniform_quantize_of_quantized_spec_example():
    other = "!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>"
    text = f"""func.func @main(%a: tensor<2x{PER_AXIS}>) -> tensor<2x{other}> {{
  %0 = "stablehlo.uniform_quantize"(%a) : (tensor<2x{PER_AXIS}>) -> tensor<2x{other}>
  return %0 : tensor<2x{other}>
}}"""
    for where, got in run_everywhere(text, np.array([10, 10], np.int8)):
        assert got.dtype == np.int8 and got.tolist() == [20, 45], where


def test_uniform_dequantize_spec_example_and_round_trip():
    text = f"""func.func @main(%a: tensor<2x{PER_AXIS}>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {{
  %0 = "stablehlo.uniform_dequantize"(%a) : (tensor<2x{PER_AXIS}>) -> tensor<2xf32>
  %1 = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{PER_AXIS}>
  %2 = "stablehlo.uniform_dequantize"(%1) : (tensor<2x{PER_AXIS}>) -> tensor<2xf32>
  return %0, %2 : tensor<2xf32>, tensor<2xf32>
}}"""
    for where, (deq, qdq) in run_everywhere(text, np.array([10, 10], np.int8), np.array([4.0, 15.0], np.float32)):
        np.testing.assert_allclose(deq, [4.0, 15.0], rtol=1e-6, err_msg=where)
        np.testing.assert_allclose(qdq, [4.0, 15.0], rtol=1e-6, err_msg=where)


def test_quantized_add_spec_interpreter_example():
    a, b, r = ("!quant.uniform<i8:f32, 0.1:-30>", "!quant.uniform<i8:f32, 0.5:-20>", "!quant.uniform<i8:f32, 0.5:-20>")
    text = f"""func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xi8> {{
  %0 = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{a}>
  %1 = "stablehlo.uniform_quantize"(%y) : (tensor<2xf32>) -> tensor<2x{b}>
  %2 = "stablehlo.add"(%0, %1) : (tensor<2x{a}>, tensor<2x{b}>) -> tensor<2x{r}>
  %3 = "stablehlo.bitcast_convert"(%2) : (tensor<2x{r}>) -> tensor<2xi8>
  return %3 : tensor<2xi8>
}}"""
    for where, got in run_everywhere(text, np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)):
        assert got.tolist() == [-12, -8], where


def test_quantize_saturates_at_storage_bounds_and_rounds_half_to_even():
    q = "!quant.uniform<i8<-100:100>:f32, 0.5:2>"
    text = f"""func.func @main(%x: tensor<8xf32>) -> tensor<8x{q}> {{
  %0 = "stablehlo.uniform_quantize"(%x) : (tensor<8xf32>) -> tensor<8x{q}>
  return %0 : tensor<8x{q}>
}}"""
    x = np.array([1000.0, -1000.0, 0.25, 0.75, -0.25, 1.25, 0.0, 49.0], np.float32)
    want = spec_quantize(x, 0.5, 2, -100, 100)
    assert want.tolist() == [100, -100, 2, 4, 2, 4, 2, 100]
    for where, got in run_everywhere(text, x):
        np.testing.assert_array_equal(got, want, err_msg=where)


UNARY = {"abs": np.abs, "negate": np.negative, "exponential": np.exp, "sqrt": np.sqrt, "tanh": np.tanh,
         "floor": np.floor, "sign": np.sign, "logistic": lambda v: 1 / (1 + np.exp(-v)), "cosine": np.cos}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2, "power": np.power}


@pytest.mark.parametrize("op", list(UNARY) + list(BINARY))
def test_elementwise_ops_dequantize_compute_quantize(op):
    qa, qb, qr = (0.05, -7), (0.1, 3), (0.08, 5)
    types = [f"!quant.uniform<i8:f32, {s}:{z}>" for s, z in (qa, qb, qr)]
    rng = np.random.default_rng(len(op))
    a = rng.integers(-128, 128, 16).astype(np.int8)
    b = rng.integers(-128, 128, 16).astype(np.int8)
    if op in ("sqrt", "power"):
        a = np.abs(a.astype(np.int16)).clip(0, 127).astype(np.int8)  # values >= the zero point's
        a = np.maximum(a, -qa[1]).astype(np.int8)
    unary = op in UNARY
    params = f"%a: tensor<16x{types[0]}>" + ("" if unary else f", %b: tensor<16x{types[1]}>")
    operands = "%a" if unary else "%a, %b"
    in_types = f"tensor<16x{types[0]}>" + ("" if unary else f", tensor<16x{types[1]}>")
    text = f"""func.func @main({params}) -> tensor<16x{types[2]}> {{
  %0 = "stablehlo.{op}"({operands}) : ({in_types}) -> tensor<16x{types[2]}>
  return %0 : tensor<16x{types[2]}>
}}"""
    with np.errstate(all="ignore"):
        floats = [spec_dequantize(a, *qa)] + ([] if unary else [spec_dequantize(b, *qb)])
        want = spec_quantize((UNARY if unary else BINARY)[op](*floats), *qr)
    args = (a,) if unary else (a, b)
    for where, got in run_everywhere(text, *args):
        assert got.dtype == np.int8, where
        # float32 math differs from numpy's in the last bit at most: a quantized step, rarely
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 1, where
        assert (got == want).mean() > 0.9, where


def test_compare_and_select_on_quantized_values():
    qa, qb = "!quant.uniform<i8:f32, 0.1:0>", "!quant.uniform<i8:f32, 0.3:10>"
    lt = "{comparison_direction = #stablehlo<comparison_direction LT>}"
    text = f"""func.func @main(%a: tensor<6x{qa}>, %b: tensor<6x{qa}>, %c: tensor<6x{qb}>)
    -> (tensor<6xi1>, tensor<6x{qb}>) {{
  %0 = "stablehlo.compare"(%a, %c) {lt} : (tensor<6x{qa}>, tensor<6x{qb}>) -> tensor<6xi1>
  %1 = "stablehlo.select"(%0, %a, %b) : (tensor<6xi1>, tensor<6x{qa}>, tensor<6x{qa}>)
    -> tensor<6x{qb}>
  return %0, %1 : tensor<6xi1>, tensor<6x{qb}>
}}"""
    a = np.array([10, 20, 30, -10, 0, 127], np.int8)
    b = np.array([1, 2, 3, 4, 5, 6], np.int8)
    c = np.array([13, 10, 20, 0, 10, 40], np.int8)
    less = spec_dequantize(a, 0.1, 0) < spec_dequantize(c, 0.3, 10)
    chosen = spec_quantize(np.where(less, spec_dequantize(a, 0.1, 0), spec_dequantize(b, 0.1, 0)), 0.3, 10)
    for where, (got_less, got) in run_everywhere(text, a, b, c):
        np.testing.assert_array_equal(got_less, less, err_msg=where)
        np.testing.assert_array_equal(got, chosen, err_msg=where)


def test_dot_general_quantized_to_i32_and_hybrid_with_per_axis_weights():
    """Fully quantized: i8 x i8 -> i32 (scale the product of the operands'); hybrid: f32 x
    per-axis i8 weights -> f32, the weights dequantized along their output dimension."""
    qx, qw = "!quant.uniform<i8:f32, 0.5:1>", "!quant.uniform<i8:f32, 0.25:-2>"
    qr = "!quant.uniform<i32:f32, 0.125>"
    qaxis = "!quant.uniform<i8:f32:1, {0.1:0,0.2:1,0.4:-1}>"
    dims = ("{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], "
            "rhs_contracting_dimensions = [0]>}")
    text = f"""func.func @main(%x: tensor<2x4x{qx}>, %w: tensor<4x3x{qw}>, %f: tensor<2x4xf32>, %v: tensor<4x3x{qaxis}>)
    -> (tensor<2x3x{qr}>, tensor<2x3xf32>) {{
  %0 = "stablehlo.dot_general"(%x, %w) {dims} : (tensor<2x4x{qx}>, tensor<4x3x{qw}>) -> tensor<2x3x{qr}>
  %1 = "stablehlo.dot_general"(%f, %v) {dims} : (tensor<2x4xf32>, tensor<4x3x{qaxis}>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3x{qr}>, tensor<2x3xf32>
}}"""
    rng = np.random.default_rng(3)
    x = rng.integers(-20, 20, (2, 4)).astype(np.int8)
    w = rng.integers(-20, 20, (4, 3)).astype(np.int8)
    f = rng.standard_normal((2, 4)).astype(np.float32)
    v = rng.integers(-20, 20, (4, 3)).astype(np.int8)
    product = spec_dequantize(x, 0.5, 1) @ spec_dequantize(w, 0.25, -2)
    want_q = spec_quantize(product, 0.125, 0, -(2 ** 31), 2 ** 31 - 1, np.int32)
    scales, zero_points = np.array([0.1, 0.2, 0.4], np.float32), np.array([0, 1, -1])
    want_h = f @ ((v.astype(np.int64) - zero_points).astype(np.float32) * scales)
    for where, (got_q, got_h) in run_everywhere(text, x, w, f, v):
        assert got_q.dtype == np.int32, where
        np.testing.assert_array_equal(got_q, want_q, err_msg=where)
        np.testing.assert_allclose(got_h, want_h, rtol=1e-5, err_msg=where)


def test_data_movement_keeps_the_storage_values():
    q = "!quant.uniform<i8:f32, 0.1:-3>"
    text = f"""func.func @main(%a: tensor<2x3x{q}>) -> tensor<3x2x{q}> {{
  %0 = "stablehlo.transpose"(%a) {{permutation = array<i64: 1, 0>}} : (tensor<2x3x{q}>) -> tensor<3x2x{q}>
  return %0 : tensor<3x2x{q}>
}}"""
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    for where, got in run_everywhere(text, a):
        np.testing.assert_array_equal(got, a.T, err_msg=where)


def test_convolution_of_quantized_operands_and_hybrid():
    """A 1-d convolution of quantized input and kernel to a quantized result, and the hybrid
    form (float input, quantized kernel, float result), against the float convolution of the
    dequantized values."""
    qx, qk, qr = "!quant.uniform<i8:f32, 0.1:2>", "!quant.uniform<i8:f32, 0.05:-1>", "!quant.uniform<i8:f32, 0.02>"
    conv = ("{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
            "feature_group_count = 1 : i64}")
    text = f"""func.func @main(%x: tensor<1x6x1x{qx}>, %k: tensor<3x1x1x{qk}>, %f: tensor<1x6x1xf32>)
    -> (tensor<1x4x1x{qr}>, tensor<1x4x1xf32>) {{
  %0 = "stablehlo.convolution"(%x, %k) {conv} : (tensor<1x6x1x{qx}>, tensor<3x1x1x{qk}>) -> tensor<1x4x1x{qr}>
  %1 = "stablehlo.convolution"(%f, %k) {conv} : (tensor<1x6x1xf32>, tensor<3x1x1x{qk}>) -> tensor<1x4x1xf32>
  return %0, %1 : tensor<1x4x1x{qr}>, tensor<1x4x1xf32>
}}"""
    rng = np.random.default_rng(4)
    x = rng.integers(-30, 30, (1, 6, 1)).astype(np.int8)
    k = rng.integers(-30, 30, (3, 1, 1)).astype(np.int8)
    f = rng.standard_normal((1, 6, 1)).astype(np.float32)
    kernel = spec_dequantize(k, 0.05, -1)[:, 0, 0]

    def correlate(v):
        return np.array([v[i:i + 3] @ kernel for i in range(4)], np.float32).reshape(1, 4, 1)
    want_q = spec_quantize(correlate(spec_dequantize(x, 0.1, 2)[0, :, 0]), 0.02, 0)
    want_h = correlate(f[0, :, 0])
    for where, (got_q, got_h) in run_everywhere(text, x, k, f):
        np.testing.assert_array_equal(got_q, want_q, err_msg=where)
        np.testing.assert_allclose(got_h, want_h, rtol=1e-5, err_msg=where)
