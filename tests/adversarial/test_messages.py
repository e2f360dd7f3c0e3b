"""Errors in loom's own words (MLIR's, where MLIR has one), never Python's: hex and huge numbers in
stablehlo attributes, a dense literal of the wrong shape; big-endian arguments run; knn scores
that overflow the vectors' type are an error naming the inputs, not NaN or inf."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import loom
import loom.ir as ir
from loom import knn

ACCURACY = """func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.cosine"(%a) {result_accuracy = #stablehlo.result_accuracy<atol = ATOL, rtol = 0.0, ulps = ULPS, \
mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""


def mlir_error(text: str) -> str:
    """jaxlib's parser's message for `text` (the oracle for MLIR's wording)."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir as jir
    with mlir.make_ir_context():
        with pytest.raises(Exception) as e:
            jir.Module.parse(text)
    return str(e.value)


def loom_error(text: str) -> ir.ParseError:
    with pytest.raises(ir.ParseError) as e:
        ir.parse(text)
    return e.value


def test_hex_float_in_result_accuracy_is_the_bit_pattern_as_in_mlir():
    module = ir.parse(ACCURACY.replace("ATOL", "0x3FF0000000000000").replace("ULPS", "0"))
    (cosine,) = [op for op in module.walk() if op.name == "stablehlo.cosine"]
    assert cosine.get_attr("result_accuracy").atol == 1.0


@pytest.mark.parametrize("atol, ulps, mlir_words, loom_words", [
    ("0x13FF0000000000000", "0", "hexadecimal float constant out of range for type",
     "hexadecimal float constant out of range for 'atol' in #stablehlo.result_accuracy"),
    ("1.0", "1" + "0" * 5000, "integer value too large",
     "integer value too large for 'ulps' in #stablehlo.result_accuracy"),
    ("1.0", "100000000000000000000", "integer value too large",
     "integer value too large for 'ulps' in #stablehlo.result_accuracy"),
])
def test_out_of_range_numbers_in_stablehlo_attributes_get_mlir_messages(atol, ulps, mlir_words, loom_words):
    text = ACCURACY.replace("ATOL", atol).replace("ULPS", ulps)
    assert mlir_words in mlir_error(text)
    e = loom_error(text)
    assert e.message == loom_words and e.line == 2
    assert "sys.set_int_max_str_digits" not in str(e) and "could not convert" not in str(e)


def test_non_numbers_in_stablehlo_attributes_are_named():
    e = loom_error(ACCURACY.replace("ATOL", "abc").replace("ULPS", "0"))
    assert e.message == "expected floating point literal for 'atol' in #stablehlo.result_accuracy, but got 'abc'"
    huge = """func.func @f() -> tensor<i32> {
  %0 = "stablehlo.all_reduce"() {channel_handle = #stablehlo.channel_handle<handle = 1HANDLE, type = 0>} : \
() -> tensor<i32>
  return %0 : tensor<i32>
}""".replace("HANDLE", "0" * 5000)
    assert loom_error(huge).message == "integer value too large for 'handle' in #stablehlo.channel_handle"


@pytest.mark.parametrize("generic", [True, False])
def test_dense_literal_of_the_wrong_shape_gets_mlirs_message(generic):
    op = ('"stablehlo.constant"() <{value = dense<[1.0, 2.0]> : tensor<3xf32>}> : () -> tensor<3xf32>' if generic
          else "stablehlo.constant dense<[1.0, 2.0]> : tensor<3xf32>")
    text = f"func.func @f() -> tensor<3xf32> {{\n  %0 = {op}\n  return %0 : tensor<3xf32>\n}}"
    e = loom_error(text)
    assert f'"-":2:{e.column}: {e.message}' in mlir_error(text)


def test_big_endian_arguments_run_in_compile():
    text = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xf32> {
  %0 = stablehlo.convert %b : (tensor<3xi32>) -> tensor<3xf32>
  %1 = stablehlo.add %a, %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}"""
    a, b = np.array([1.5, -2, 3], ">f4"), np.array([1, 1 << 20, -7], ">i4")
    for executor in ("compiled", "interpreter"):
        np.testing.assert_array_equal(loom.compile(text, executor=executor)(a, b), a.astype("<f4") + b)
    with pytest.raises(loom.backend.common.ArgumentError, match=r"argument 1 expected tensor<3xi32>, got int64\[3\]"):
        loom.compile(text)(a, np.array([1, 2, 3], ">i8"))


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_knn_scores_that_overflow_float32_are_an_error_naming_the_inputs(metric):
    rng = np.random.default_rng(0)
    database = rng.standard_normal((100, 8)).astype(np.float32) * 1e20
    queries = rng.standard_normal((3, 8)).astype(np.float32) * 1e20
    index = knn.Index(8, metric)
    index.add(database)
    for search in (lambda: knn.search(queries, database, 5, metric=metric), lambda: index.search(queries, 5)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy RuntimeWarning either
            with pytest.raises(ValueError, match=r"knn search scores overflow float32 .*queries .*database"):
                search()
    # float64 holds these scores: the same search in float64 is exact against numpy
    q64, d64 = queries.astype(np.float64), database.astype(np.float64)
    scores, ids = knn.search(q64, d64, 5, metric=metric, recall_target=1.0)
    want = q64 @ d64.T if metric == "ip" else ((q64[:, None] - d64[None]) ** 2).sum(-1)
    order = np.argsort(-want if metric == "ip" else want, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(ids, order)
    np.testing.assert_allclose(scores, np.take_along_axis(want, order, 1), rtol=1e-12)


def test_removing_no_ids_is_a_no_op():
    index = knn.Index(2)
    index.add(np.eye(2, dtype=np.float32))
    index.remove([])
    index.remove(np.array([], np.float64))
    assert sorted(index.ids.tolist()) == [0, 1]
