"""dynamic_pad, dynamic_gather, dynamic_conv, real_dynamic_slice and set_dimension_size on static
inputs, in every executor: the spec's examples (out-of-bounds gather indices clamped, negative
edge padding), XLA's values with the run-time operands as constants (XLA folds them; loom reads
them when the program runs), and a clear error naming the op for what the spec leaves undefined."""

from __future__ import annotations

import numpy as np
import pytest
from support.executors import EXECUTORS, assert_all_close, module
from support.oracles import run_xla

import loom
from loom.backend.common import ExecutionError

pytestmark = pytest.mark.usefixtures("jax_x64")


def _type(shape, dtype):
    return f"tensor<{''.join(f'{n}x' for n in shape)}{dtype}>"


def _pad(shape, out, dtype, rank=2, folded=None):
    """`dynamic_pad` with run-time paddings, or with `folded = (low, high, interior)` constants."""
    t, to, p = _type(shape, dtype), _type(out, dtype), f"tensor<{rank}xi64>"
    params = "" if folded else f", %lo: {p}, %hi: {p}, %in: {p}"
    constants = "".join(f"  %{name} = stablehlo.constant dense<{values}> : {p}\n"
                        for name, values in zip(("lo", "hi", "in"), folded or ()))
    return module(f"""func.func @main(%x: {t}, %v: tensor<{dtype}>{params}) -> {to} {{
{constants}  %0 = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : ({t}, tensor<{dtype}>, {p}, {p}, {p}) -> {to}
  return %0 : {to}
}}""")


def test_dynamic_pad_spec_examples():
    x = np.array([[1, 2, 3], [4, 5, 6]])
    want = np.array([[0, 1, 0, 0, 2, 0, 0, 3, 0], [0] * 9, [0, 4, 0, 0, 5, 0, 0, 6, 0], [0] * 9, [0] * 9])
    assert_all_close(_pad((2, 3), (5, 9), "i64"), [x, np.int64(0), np.array([0, 1]), np.array([2, 1]),
                                                   np.array([1, 2])], want, 0, 0)
    # negative edge padding crops (the interpreter's example)
    x = np.array([[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0], [0, 5, 6, 0], [0, 0, 0, 0]])
    want = np.array([[-1, -1, -1, -1, -1], [-1, 0, -1, 0, -1], [-1, 1, -1, 2, -1], [-1, 3, -1, 4, -1],
                     [-1, 5, -1, 6, -1], [-1, 0, -1, 0, -1], [-1, -1, -1, -1, -1]])
    assert_all_close(_pad((5, 4), (7, 5), "i64"), [x, np.int64(-1), np.array([1, -1]), np.array([1, -1]),
                                                   np.array([0, 1])], want, 0, 0)


@pytest.mark.parametrize("low,high,interior", [([1, 0], [0, 2], [0, 0]), ([-1, 2], [1, -2], [2, 1]),
                                               ([0, 0], [0, 0], [3, 0])])
def test_dynamic_pad_against_xla(low, high, interior):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = tuple(n + lo + hi + max(n - 1, 0) * it for n, lo, hi, it in zip(x.shape, low, high, interior))
    run_time = _pad((3, 4), out, "f32")
    folded = _pad((3, 4), out, "f32", folded=(low, high, interior))
    (want,) = run_xla(folded, [x, np.float32(-7)])
    assert_all_close(run_time, [x, np.float32(-7), np.array(low), np.array(high), np.array(interior)], want, 0, 0)


def _gather(sizes_as_operand: bool) -> str:
    params = ", %sizes: tensor<3xi64>" if sizes_as_operand else ""
    sizes = "" if sizes_as_operand else "%sizes = stablehlo.constant dense<[1, 2, 2]> : tensor<3xi64>"
    return module(f"""func.func @main(%operand: tensor<3x4x2xi64>, %start: tensor<2x3x2xi64>{params})
    -> tensor<2x3x2x2xi64> {{
  {sizes}
  %0 = "stablehlo.dynamic_gather"(%operand, %start, %sizes) {{
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0],
                                          index_vector_dim = 2>,
    indices_are_sorted = false}} : (tensor<3x4x2xi64>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x2x2xi64>
  return %0 : tensor<2x3x2x2xi64>
}}""")


@pytest.mark.parametrize("last_index", [[0, 2], [0, 9], [-5, -3]])
def test_dynamic_gather_spec_example_and_clamped_indices(last_index):
    """The spec's example ([0, 2]); out-of-bounds start indices are clamped so the slice lies in
    the operand, as the interpreter's example ([0, 9]) and negative ones; XLA agrees."""
    operand = np.arange(1, 25).reshape(3, 4, 2)
    start = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], last_index]])
    want = np.array([[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                     [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]])
    if last_index == [-5, -3]:
        want[1, 2] = [[1, 2], [3, 4]]
    (xla,) = run_xla(_gather(False), [operand, start])
    np.testing.assert_array_equal(xla, want)
    assert_all_close(_gather(True), [operand, start, np.array([1, 2, 2])], want, 0, 0)


def test_dynamic_conv_spec_example_and_xla_convolution():
    """The spec's example; and against XLA's (static) convolution with the same padding, which the
    spec says dynamic_conv is, for other paddings."""
    lhs = np.array([[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]], [[12], [13], [16], [17]]]])
    rhs = np.ones((3, 3, 1, 1), np.int64)
    attrs = """window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>,
    window_reversal = array<i1: false, false>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    batch_group_count = 1 : i64, feature_group_count = 1 : i64,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]"""
    text = module(f"""func.func @main(%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<3x3x1x1xi64>, %padding: tensor<2x2xi64>)
    -> tensor<1x2x2x1xi64> {{
  %0 = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {{{attrs}}}
    : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, tensor<2x2xi64>) -> tensor<1x2x2x1xi64>
  return %0 : tensor<1x2x2x1xi64>
}}""")
    assert_all_close(text, [lhs, rhs, np.ones((2, 2), np.int64)], np.array([[[[1], [5]], [[10], [14]]]]), 0, 0)
    for padding in ([[0, 2], [1, 0]], [[2, 1], [0, 3]]):
        static = module(f"""func.func @main(%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<3x3x1x1xi64>)
    -> tensor<1x2x2x1xi64> {{
  %0 = stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {{stride = [4, 4], pad = {padding}, lhs_dilate = [2, 2], rhs_dilate = [1, 1]}}
    {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}}
    : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>) -> tensor<1x2x2x1xi64>
  return %0 : tensor<1x2x2x1xi64>
}}""")
        (want,) = run_xla(static, [lhs, rhs])
        assert_all_close(text, [lhs, rhs, np.array(padding)], want, 0, 0)


def _real_dynamic_slice(shape, out):
    t, to = _type(shape, "f32"), _type(out, "f32")
    return module(f"""func.func @main(%x: {t}, %s: tensor<2xi64>, %l: tensor<2xi64>, %t: tensor<2xi64>) -> {to} {{
  %0 = stablehlo.real_dynamic_slice %x, %s, %l, %t : ({t}, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> {to}
  return %0 : {to}
}}""")


@pytest.mark.parametrize("start,limit,strides,out", [([1, 0], [5, 4], [2, 2], (2, 2)), ([0, 0], [5, 6], [1, 1], (5, 6)),
                                                     ([2, 3], [2, 6], [1, 3], (0, 1))])
def test_real_dynamic_slice_against_xla(start, limit, strides, out):
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    folded = module(f"""func.func @main(%x: tensor<5x6xf32>) -> {_type(out, "f32")} {{
  %s = stablehlo.constant dense<{start}> : tensor<2xi64>
  %l = stablehlo.constant dense<{limit}> : tensor<2xi64>
  %t = stablehlo.constant dense<{strides}> : tensor<2xi64>
  %0 = stablehlo.real_dynamic_slice %x, %s, %l, %t
    : (tensor<5x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> {_type(out, "f32")}
  return %0 : {_type(out, "f32")}
}}""")
    (want,) = run_xla(folded, [x])
    assert_all_close(_real_dynamic_slice((5, 6), out), [x, np.array(start), np.array(limit), np.array(strides)],
                     want, 0, 0)


BOUNDED = "tensor<?x3xf32, #stablehlo.bounds<4, ?>>"
SET_SIZE = module(f"""func.func @main(%x: tensor<4x3xf32>, %n: tensor<i32>) -> ({BOUNDED}, tensor<i32>) {{
  %0 = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<4x3xf32>, tensor<i32>) -> {BOUNDED}
  %1 = stablehlo.get_dimension_size %0, dim = 0 : ({BOUNDED}) -> tensor<i32>
  return %0, %1 : {BOUNDED}, tensor<i32>
}}""")


@pytest.mark.parametrize("size", [0, 2, 4])
def test_set_dimension_size_cuts_to_the_run_time_size(size):
    """The bounded dimension holds `size` elements at run time: the first ones, which
    get_dimension_size then reads."""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert_all_close(SET_SIZE, [x, np.int32(size)], (x[:size], np.int32(size)), 0, 0)


def _assert_fails(text, args, *words):
    for ex, be in EXECUTORS:
        with pytest.raises(ExecutionError) as info:
            loom.execute(text, *args, executor=ex, backend=be)
        for w in words:
            assert w in str(info.value), (ex, be, str(info.value))


def test_undefined_cases_name_the_op():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    _assert_fails(SET_SIZE, [x, np.int32(5)], "stablehlo.set_dimension_size", "loc(", "size 5", "bound")
    _assert_fails(_real_dynamic_slice((5, 6), (2, 2)), [np.zeros((5, 6), np.float32), np.array([4, 0]),
                                                        np.array([8, 4]), np.array([2, 2])],
                  "stablehlo.real_dynamic_slice", "dimension 0", "[4:8:2]")
    # operands that contradict the static result type
    _assert_fails(_real_dynamic_slice((5, 6), (2, 2)), [np.zeros((5, 6), np.float32), np.array([0, 0]),
                                                        np.array([5, 4]), np.array([2, 2])],
                  "stablehlo.real_dynamic_slice", "(3, 2)", "(2, 2)")
    pad = _pad((2,), (2,), "f32", rank=1)
    _assert_fails(pad, [np.zeros(2, np.float32), np.float32(0), np.array([1]), np.array([0]), np.array([-1])],
                  "stablehlo.dynamic_pad", "interior padding")
