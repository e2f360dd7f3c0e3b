"""bitcast_convert where an element's bits differ from its storage's (i1 in a byte, i4 in int8)
and between complex and real types of different widths, with the spec's shape rules (the last
dimension grows or shrinks): the examples of the StableHLO interpreter's test suite
(stablehlo/tests/interpret/bitcast_convert.mlir) in both executors and the torch backend, and
the cases XLA's CPU backend runs against it. Also reduce_precision's spec examples."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from support.executors import run_everywhere  # noqa: E402
from support.oracles import run_xla  # noqa: E402

import loom.ir  # noqa: E402

BITS_0123 = [bool(int(c)) for c in f"{0x0123456789ABCDEF:064b}"[::-1]]  # little-endian bits


def bitcast(source: str, target: str) -> str:
    return (f"func.func @main(%a: {source}) -> {target} {{\n"
            f"  %0 = stablehlo.bitcast_convert %a : ({source}) -> {target}\n"
            f"  return %0 : {target}\n}}")


def test_i1_to_i64_as_the_spec_interpreter():
    bits = np.array(BITS_0123)
    for where, got in run_everywhere(bitcast("tensor<64xi1>", "tensor<i64>"), bits):
        assert got.shape == () and int(got) == 0x0123456789ABCDEF, where


def test_f64_to_i1_as_the_spec_interpreter():
    x = np.array(0x0123456789ABCDEF, np.int64).view(np.float64)
    for where, got in run_everywhere(bitcast("tensor<f64>", "tensor<64xi1>"), x):
        assert got.dtype == np.bool_ and got.tolist() == BITS_0123, where


def test_i1_rows_pack_into_the_last_dimension():
    """tensor<2x3x8xi1> -> tensor<2x3xi8>: each row of 8 bits is one byte, bit 0 first."""
    x = np.random.default_rng(0).integers(0, 256, (2, 3)).astype(np.uint8)
    bits = np.unpackbits(x[..., None], axis=-1, bitorder="little").astype(bool)
    for where, got in run_everywhere(bitcast("tensor<2x3x8xi1>", "tensor<2x3xui8>"), bits):
        np.testing.assert_array_equal(got, x, err_msg=where)
    for where, got in run_everywhere(bitcast("tensor<2x3xui8>", "tensor<2x3x8xi1>"), x):
        np.testing.assert_array_equal(got, bits, err_msg=where)


def test_c128_to_c64_as_the_spec_interpreter():
    x = np.array([0x0123456789ABCDEF, 0x0000000011111111], np.uint64).view(np.complex128)[0]
    want = np.array([0x89ABCDEF, 0x01234567, 0x11111111, 0x00000000], np.uint32).view(np.complex64)
    for where, got in run_everywhere(bitcast("tensor<complex<f64>>", "tensor<2xcomplex<f32>>"), np.array(x)):
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=where)


@pytest.mark.parametrize("source,target,dtype,shape,result_shape", [
    ("tensor<2xcomplex<f64>>", "tensor<2x4xf32>", np.complex128, (2,), (2, 4)),
    ("tensor<2x4xf32>", "tensor<2xcomplex<f64>>", np.float32, (2, 4), (2,)),
    ("tensor<3xcomplex<f32>>", "tensor<3x8xi8>", np.complex64, (3,), (3, 8)),
    ("tensor<3x4xi16>", "tensor<3xcomplex<f32>>", np.int16, (3, 4), (3,)),
    ("tensor<2x2xcomplex<f32>>", "tensor<2xcomplex<f64>>", np.complex64, (2, 2), (2,)),
])
def test_complex_and_real_of_different_widths(source, target, dtype, shape, result_shape):
    """The operand's bytes read as the result's, little-endian (the real part first)."""
    raw = np.random.default_rng(1).integers(0, 256, int(np.prod(shape)) * np.dtype(dtype).itemsize)
    x = raw.astype(np.uint8).view(dtype).reshape(shape)
    for where, got in run_everywhere(bitcast(source, target), x):
        assert got.shape == result_shape and got.tobytes() == x.tobytes(), where


def test_f64_to_f16_as_the_spec_example():
    x = np.array(0x0123456789ABCDEF, np.int64).view(np.float64)
    for where, got in run_everywhere(bitcast("tensor<f64>", "tensor<4xf16>"), x):
        assert got.view(np.uint16).tolist() == [0xCDEF, 0x89AB, 0x4567, 0x0123], where


@pytest.mark.parametrize("source,target,make", [
    ("tensor<4x2xi4>", "tensor<4xi8>", lambda r: r.integers(-8, 8, (4, 2)).astype(np.int8)),
    ("tensor<5xi8>", "tensor<5x2xi4>", lambda r: r.integers(-128, 128, 5).astype(np.int8)),
    ("tensor<3x4xui4>", "tensor<3xi16>", lambda r: r.integers(0, 16, (3, 4)).astype(np.uint8)),
    ("tensor<3x2xi2>", "tensor<3xui4>", lambda r: r.integers(-2, 2, (3, 2)).astype(np.int8)),
])
def test_subbyte_integers_as_xla(source, target, make):
    import ml_dtypes
    x = make(np.random.default_rng(2))
    narrow = {"i4": ml_dtypes.int4, "ui4": ml_dtypes.uint4, "i2": ml_dtypes.int2}
    et = source.split("x")[-1].rstrip(">")
    want = np.asarray(run_xla(bitcast(source, target), [x.astype(narrow.get(et, x.dtype))])[0])
    for where, got in run_everywhere(bitcast(source, target), x):
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=where)


def test_verifier_checks_the_last_dimension():
    with pytest.raises(loom.ir.diagnostics.LoomError):
        loom.ir.parse(bitcast("tensor<4xi1>", "tensor<i8>")).verify()


def test_reduce_precision_spec_example():
    """The spec's example, e5m10 on f64: +inf, NaN, a denormal, 0.0, 65519.0, 65520.0."""
    x = np.array([0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF, 1, 0, 0, 0], np.uint64).view(np.float64)
    x[4:] = [65519.0, 65520.0]
    text = ("func.func @main(%a: tensor<6xf64>) -> tensor<6xf64> {\n"
            "  %0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<6xf64>\n"
            "  return %0 : tensor<6xf64>\n}")
    for where, got in run_everywhere(text, x):
        assert got[0] == np.inf and np.isnan(got[1]) and got[2:].tolist() == [0.0, 0.0, 65504.0, np.inf], where
