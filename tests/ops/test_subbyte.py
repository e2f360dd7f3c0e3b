"""Sub-byte integers (i2, i4, ui2, ui4): held in int8 / uint8 and wrapped at their own width
after every op, in both executors and the torch backend. Each op runs over every pair of values
of the type against the same program on XLA's CPU backend; population_count, where XLA counts
the bits of its 8-bit storage, against the spec's definition; literals against jaxlib's parser."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")

from support.executors import EXECUTORS, one_op_program, run_everywhere  # noqa: E402
from support.oracles import run_xla  # noqa: E402

import loom.ir  # noqa: E402
from loom.ir.diagnostics import LoomError  # noqa: E402
from loom.runtime.executable import execute  # noqa: E402

# type, ml_dtypes type, width, signed
TYPES = [("i4", ml_dtypes.int4, 4, True), ("ui4", ml_dtypes.uint4, 4, False),
         ("i2", ml_dtypes.int2, 2, True), ("ui2", ml_dtypes.uint2, 2, False)]
BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or", "xor",
          "shift_left", "shift_right_logical", "shift_right_arithmetic"]
UNARY = ["negate", "abs", "not", "count_leading_zeros", "sign"]


def every_pair(width: int, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = (-(1 << (width - 1)), 1 << (width - 1)) if signed else (0, 1 << width)
    x, y = np.meshgrid(np.arange(lo, hi), np.arange(lo, hi))
    dt = np.int8 if signed else np.uint8
    return x.reshape(-1).astype(dt), y.reshape(-1).astype(dt)


CASES = [(op, *t) for t in TYPES for op in BINARY + UNARY if t[3] or op not in ("abs", "sign")]


@pytest.mark.parametrize("op,t,mldt,width,signed", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_ops_wrap_at_their_width_as_xla(op, t, mldt, width, signed):
    x, y = every_pair(width, signed)
    args = (x,) if op in UNARY else (x, y)
    keep = np.ones(x.size, bool)
    if op in ("divide", "remainder"):
        keep = y != 0  # XLA's division by zero is implementation-defined: loom's is checked below
    text = one_op_program(op, t, x.size, len(args))
    if op in ("abs", "sign", "not"):
        # XLA's CPU backend rejects these on sub-byte types; the spec's arithmetic in Python
        lo = -(1 << (width - 1)) if signed else 0
        ref = {"abs": np.abs, "sign": np.sign, "not": lambda v: ~v}[op](x.astype(np.int64))
        want = ((ref - lo) % (1 << width) + lo).astype(x.dtype)
    else:
        want = run_xla(text, [a.astype(mldt) for a in args])[0].astype(x.dtype)
    for where, got in run_everywhere(text, *args):
        assert got.dtype == x.dtype, where
        np.testing.assert_array_equal(got[keep], want[keep], err_msg=f"{op} on {t} ({where})")
        if op == "divide":  # x / 0 is all ones, as loom's wider integers (and XLA's) give
            assert (got[~keep] == (-1 if signed else (1 << width) - 1)).all(), where
        if op == "remainder":  # x % 0 is x
            np.testing.assert_array_equal(got[~keep], x[~keep], err_msg=where)


def test_add_i4_seven_plus_one_is_minus_eight():
    text = one_op_program("add", "i4", 1, 2)
    for where, got in run_everywhere(text, np.array([7], np.int8), np.array([1], np.int8)):
        assert got.tolist() == [-8], where


@pytest.mark.parametrize("t,mldt,width,signed", TYPES, ids=[t[0] for t in TYPES])
def test_population_count_counts_the_types_own_bits(t, mldt, width, signed):
    """The spec counts the bits of the type; XLA's CPU backend counts those of its 8-bit storage
    (popcnt of i4 -1 gives 8, which wraps to -8), so the oracle is the definition."""
    x, _ = every_pair(width, signed)
    counts = np.array([bin(int(v) & ((1 << width) - 1)).count("1") for v in x])
    if signed:  # the count is a value of the type: i2's 2 is -2
        counts = np.where(counts >= 1 << (width - 1), counts - (1 << width), counts)
    want = counts.astype(x.dtype)
    for where, got in run_everywhere(one_op_program("popcnt", t, x.size, 1), x):
        np.testing.assert_array_equal(got, want, err_msg=where)


@pytest.mark.parametrize("t,mldt,width,signed", TYPES, ids=[t[0] for t in TYPES])
@pytest.mark.parametrize("source", ["f32", "i32", "i8"])
def test_convert_to_subbyte_as_xla(source, t, mldt, width, signed):
    """Floats saturate at the type's bounds (NaN gives 0), wider integers wrap."""
    if source == "f32":
        x = np.array([20.0, -20.0, np.nan, 7.6, -8.5, 3.5, 2.5, -0.7, 1.0, np.inf, -np.inf], np.float32)
    else:
        x = np.arange(-40, 40, 3).astype(np.int32 if source == "i32" else np.int8)
    text = one_op_program("convert", source, x.size, 1, t)
    want = run_xla(text, [x])[0].astype(np.int8 if signed else np.uint8)
    for where, got in run_everywhere(text, x):
        np.testing.assert_array_equal(got, want, err_msg=where)


@pytest.mark.parametrize("t,mldt,width,signed", TYPES, ids=[t[0] for t in TYPES])
def test_convert_from_subbyte_as_xla(t, mldt, width, signed):
    x, _ = every_pair(width, signed)
    x = np.unique(x)
    for target in ("f32", "i32", "ui8", "i4" if t != "i4" else "ui4"):
        text = one_op_program("convert", t, x.size, 1, target)
        want = np.asarray(run_xla(text, [x.astype(mldt)])[0])
        for where, got in run_everywhere(text, x):
            np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{t} -> {target} ({where})")


def test_arguments_take_ml_dtypes_subbyte_arrays_and_refuse_values_out_of_range():
    text = one_op_program("add", "i4", 2, 2)
    got = execute(text, np.array([7, -8], ml_dtypes.int4), np.array([1, -1], ml_dtypes.int4))
    assert got.tolist() == [-8, 7]
    with pytest.raises(TypeError, match=r"argument 0 expected tensor<2xi4>, got values out of its range"):
        execute(text, np.array([8, 0], np.int8), np.array([1, 1], np.int8))
    with pytest.raises(TypeError, match=r"expected tensor<2xi4>, got uint4\[2\]"):
        execute(text, np.array([1, 2], ml_dtypes.uint4), np.array([1, 1], ml_dtypes.int4))


def test_constants_of_subbyte_types_wrap_in_arithmetic():
    text = """func.func @main() -> (tensor<3xi4>, tensor<2xui2>) {
  %0 = stablehlo.constant dense<[7, -8, 5]> : tensor<3xi4>
  %1 = stablehlo.add %0, %0 : tensor<3xi4>
  %2 = stablehlo.constant dense<[3, 2]> : tensor<2xui2>
  %3 = stablehlo.multiply %2, %2 : tensor<2xui2>
  return %1, %3 : tensor<3xi4>, tensor<2xui2>
}"""
    want = [np.asarray(w) for w in run_xla(text, [])]
    for executor, backend in EXECUTORS:
        got = execute(text, executor=executor, backend=backend)
        got = [g.cpu().numpy() if hasattr(g, "cpu") else g for g in got]
        assert got[0].tolist() == want[0].astype(np.int8).tolist() == [-2, 0, -6]
        assert got[1].tolist() == want[1].astype(np.uint8).tolist() == [1, 0]


def test_reductions_and_loops_stay_wrapped():
    """A sum over i4 (the reducer's adds wrap), and a loop whose carry is i4."""
    text = """func.func @main(%x: tensor<6xi4>) -> (tensor<i4>, tensor<i4>) {
  %zero = stablehlo.constant dense<0> : tensor<i4>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]
    : (tensor<6xi4>, tensor<i4>) -> tensor<i4>
  %one = stablehlo.constant dense<3> : tensor<i4>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %n = stablehlo.constant dense<5> : tensor<i32>
  %r:2 = stablehlo.while(%i = %i0, %acc = %zero) : tensor<i32>, tensor<i4>
    cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %k = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %k : tensor<i32>
      %a1 = stablehlo.add %acc, %one : tensor<i4>
      stablehlo.return %i1, %a1 : tensor<i32>, tensor<i4>
    }
  return %s, %r#1 : tensor<i4>, tensor<i4>
}"""
    x = np.array([7, 7, 7, 1, -8, 3], np.int8)
    want = [np.asarray(w).astype(np.int8) for w in run_xla(text, [x.astype(ml_dtypes.int4)])]
    assert [int(w) for w in want] == [1, -1]  # 17 wraps to 1; 15 wraps to -1
    for executor, backend in EXECUTORS:
        got = execute(text, x, executor=executor, backend=backend)
        assert [int(g) for g in got] == [1, -1], f"{executor}/{backend}"


@pytest.mark.parametrize("literal,printed", [
    ("dense<[8, 15, -8, 7]> : tensor<4xi4>", "dense<[-8, -1, -8, 7]> : tensor<4xi4>"),
    ("dense<[3, 0]> : tensor<2xui2>", "dense<[3, 0]> : tensor<2xui2>"),
    ("dense<[-2, 1]> : tensor<2xsi2>", "dense<[-2, 1]> : tensor<2xsi2>"),
    ('dense<"0x0F"> : tensor<2xi4>', "dense<-1> : tensor<2xi4>"),
])
def test_subbyte_literals_print_as_jaxlib(literal, printed, jax_ir):
    ir, ctx = jax_ir
    text = f'"x.c"() {{v = {literal}}} : () -> ()'
    ours = str(loom.ir.parse(text, allow_unregistered=True)).splitlines()[1].strip()
    assert ours == f'"x.c"() {{v = {printed}}} : () -> ()'
    with ctx:
        ctx.allow_unregistered_dialects = True
        theirs = str(ir.Module.parse(text)).splitlines()[1].strip()
    assert ours == theirs


@pytest.mark.parametrize("literal", ["dense<[16]> : tensor<1xi4>", "dense<[-9]> : tensor<1xi4>",
                                     "dense<[4]> : tensor<1xui2>", "dense<[2]> : tensor<1xsi2>"])
def test_subbyte_literals_out_of_range_are_refused(literal, jax_ir):
    ir, ctx = jax_ir
    text = f'"x.c"() {{v = {literal}}} : () -> ()'
    with pytest.raises(LoomError, match="out of range"):
        loom.ir.parse(text, allow_unregistered=True)
    with ctx:
        ctx.allow_unregistered_dialects = True
        with pytest.raises(Exception, match="out of range"):
            ir.Module.parse(text)
