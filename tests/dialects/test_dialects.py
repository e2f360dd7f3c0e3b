"""The func and arith dialects: folders against numpy semantics and against MLIR's own
canonicalizer (jaxlib), canonicalization end to end, verifier errors, and the helper APIs."""

from __future__ import annotations

import math
import os
import random
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import CORPUS

import loom.ir as lir
from loom.dialects import arith, func
from loom.ir.opdef import ConstantLike, has_trait, lookup_op

os.environ.setdefault("JAX_PLATFORMS", "cpu")

I = {w: lir.IntegerType(w) for w in (1, 8, 16, 32, 64)}
NP_INT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
NP_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
FLOAT_TYPES = {"f16": (lir.f16, np.float16), "bf16": (lir.bf16, ml_dtypes.bfloat16), "f32": (lir.f32, np.float32),
               "f64": (lir.f64, np.float64)}


# Helpers -------------------------------------------------------------------------------------

def const(value: lir.Attribute) -> lir.Value:
    return arith.ConstantOp.build(value).result


def fold_binary(name: str, a: lir.Attribute, b: lir.Attribute) -> lir.Attribute | None:
    """Fold `name` on two constants, calling the op's fold hook directly."""
    op = lookup_op(name).build(const(a), const(b))
    r = op.fold([a, b])
    if r is None:
        return None
    v = r[0]
    return v if isinstance(v, lir.Attribute) else constant_of(v)


def constant_of(v: lir.Value) -> lir.Attribute | None:
    op = v.owner_op
    return op.properties["value"] if op is not None and has_trait(op, ConstantLike) else None


def int_attr(w: int, v: int) -> lir.IntegerAttr:
    return lir.IntegerAttr(I[w], v)


def np_int(w: int, v: int, unsigned: bool = False) -> np.ndarray:
    """A one-element numpy array holding `v` wrapped to width `w`."""
    return np.array([v & ((1 << w) - 1)], dtype=np.uint64).astype(NP_UINT[w]).view(
        NP_UINT[w] if unsigned else NP_INT[w])


# Integer folds against numpy -----------------------------------------------------------------

def _u(x: np.ndarray) -> np.ndarray:
    return x.view(NP_UINT[x.dtype.itemsize * 8])


NUMPY_INT = {
    "arith.addi": lambda a, b, w: a + b,
    "arith.subi": lambda a, b, w: a - b,
    "arith.muli": lambda a, b, w: a * b,
    "arith.andi": lambda a, b, w: a & b,
    "arith.ori": lambda a, b, w: a | b,
    "arith.xori": lambda a, b, w: a ^ b,
    "arith.maxsi": lambda a, b, w: np.maximum(a, b),
    "arith.minsi": lambda a, b, w: np.minimum(a, b),
    "arith.maxui": lambda a, b, w: np.maximum(_u(a), _u(b)),
    "arith.minui": lambda a, b, w: np.minimum(_u(a), _u(b)),
    "arith.divui": lambda a, b, w: _u(a) // _u(b),
    "arith.remui": lambda a, b, w: _u(a) % _u(b),
    "arith.ceildivui": lambda a, b, w: _u(a) // _u(b) + (_u(a) % _u(b) != 0),
    "arith.divsi": lambda a, b, w: np.floor_divide(a, b) + ((np.floor_divide(a, b) * b != a) & ((a < 0) != (b < 0))),
    "arith.remsi": lambda a, b, w: np.fmod(a, b),
    "arith.floordivsi": lambda a, b, w: np.floor_divide(a, b),
    "arith.ceildivsi": lambda a, b, w: -np.floor_divide(-a, b),
    "arith.shli": lambda a, b, w: np.left_shift(a, b),
    "arith.shrsi": lambda a, b, w: np.right_shift(a, b),
    "arith.shrui": lambda a, b, w: np.right_shift(_u(a), _u(b)),
}


def _unfoldable(name: str, a: int, b: int, w: int) -> bool:
    """Cases upstream leaves alone: division by zero, signed overflow, over-wide shifts."""
    lo = -(1 << (w - 1))
    if name.split(".")[1] in ("divui", "remui", "ceildivui", "divsi", "remsi", "floordivsi", "ceildivsi") and b == 0:
        return True
    if name in ("arith.divsi", "arith.floordivsi") and a == lo and b == -1:
        return True
    if name == "arith.ceildivsi" and a != 0 and b != 1 and not (a > 0 and b > 0) and lo in (a, b):
        return True
    return name.startswith("arith.sh") and not 0 <= b < w


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(NUMPY_INT)), w=st.sampled_from([8, 16, 32, 64]), data=st.data())
def test_integer_folds_match_numpy(name: str, w: int, data):
    interesting = st.sampled_from([0, 1, -1, 2, -2, 7, (1 << (w - 1)) - 1, -(1 << (w - 1))])
    values = st.integers(-(1 << (w - 1)), (1 << (w - 1)) - 1) | interesting
    a = data.draw(values)
    b = data.draw(st.integers(0, w + 1) if name.startswith("arith.sh") else values)
    got = fold_binary(name, int_attr(w, a), int_attr(w, b))
    if _unfoldable(name, a, b, w):
        assert got is None
        return
    with np.errstate(all="ignore"):
        want = NUMPY_INT[name](np_int(w, a), np_int(w, b), w)
    assert isinstance(got, lir.IntegerAttr) and got.type is I[w]
    assert got.value == int(want.astype(NP_UINT[w]).view(NP_INT[w])[0])


CMPI_NUMPY = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
              "ge": np.greater_equal}


@settings(max_examples=200, deadline=None)
@given(pred=st.sampled_from(arith.CMPI_PREDICATES), w=st.sampled_from([8, 32, 64]), data=st.data())
def test_cmpi_folds_match_numpy(pred: str, w: int, data):
    values = st.integers(-(1 << (w - 1)), (1 << (w - 1)) - 1) | st.sampled_from([0, -1, 1])
    a, b = data.draw(values), data.draw(values)
    op = arith.CmpIOp.build(pred, const(int_attr(w, a)), const(int_attr(w, b)))
    got = op.fold([int_attr(w, a), int_attr(w, b)])[0]
    x, y = np_int(w, a), np_int(w, b)
    if pred[0] == "u":
        x, y = _u(x), _u(y)
    want = CMPI_NUMPY[pred if pred in ("eq", "ne") else pred[1:]](x, y)[0]
    assert got == lir.BoolAttr(bool(want))


def float_attr(t: str, x: float) -> lir.FloatAttr:
    return lir.FloatAttr.get(x, FLOAT_TYPES[t][0])


NUMPY_FLOAT = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    "arith.remf": np.fmod, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum, "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
}
FLOATS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.1, 3.5, 1e30, -1e-30, math.inf, -math.inf, math.nan]) | st.floats(
    allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(NUMPY_FLOAT)), t=st.sampled_from(sorted(FLOAT_TYPES)), x=FLOATS, y=FLOATS)
def test_float_folds_are_computed_in_the_type_precision(name: str, t: str, x: float, y: float):
    a, b = float_attr(t, x), float_attr(t, y)
    got = fold_binary(name, a, b)
    dtype = FLOAT_TYPES[t][1]
    with np.errstate(all="ignore"):
        want = NUMPY_FLOAT[name](np.array([a.value], dtype=dtype), np.array([b.value], dtype=dtype))[0]
    assert isinstance(got, lir.FloatAttr) and got.type is FLOAT_TYPES[t][0]
    if np.isnan(want):
        assert math.isnan(got.value)
    elif name in ("arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf") and want == 0:
        assert got.value == 0  # numpy leaves the sign of max(+0, -0) unspecified
    else:
        assert got == lir.FloatAttr.get(float(want), FLOAT_TYPES[t][0])


def test_f32_arithmetic_rounds_to_f32():
    third = fold_binary("arith.divf", float_attr("f32", 1.0), float_attr("f32", 3.0))
    assert third.bits == int(np.array([1 / 3], dtype=np.float32).view(np.uint32)[0])
    big = fold_binary("arith.addf", float_attr("f32", 16777216.0), float_attr("f32", 1.0))
    assert big.value == 16777216.0  # 2^24 + 1 is not an f32
    assert fold_binary("arith.mulf", float_attr("f16", 300.0), float_attr("f16", 300.0)).value == math.inf


@settings(max_examples=300, deadline=None)
@given(w=st.sampled_from([8, 32, 64]), v=st.integers(-(1 << 63), (1 << 63) - 1),
       t=st.sampled_from(["f16", "bf16", "f32", "f64"]))
def test_integer_to_float_casts_round_once(w: int, v: int, t: str):
    a = int_attr(w, v)
    ft, dtype = FLOAT_TYPES[t]
    si = arith.SIToFPOp.build(const(a), ft).fold([a])[0]
    ui = arith.UIToFPOp.build(const(a), ft).fold([a])[0]
    u = a.value & ((1 << w) - 1)
    with np.errstate(all="ignore"):
        # exact in float64 (|v| < 2^53), so numpy's cast to the narrower type rounds once
        if abs(a.value) < (1 << 53):
            assert si == lir.FloatAttr.get(float(np.array([a.value], dtype=np.float64).astype(dtype)[0]), ft)
        if u < (1 << 53):
            assert ui == lir.FloatAttr.get(float(np.array([u], dtype=np.float64).astype(dtype)[0]), ft)
        # wider values against exact rational rounding to the type
        if t == "f64":
            assert si.value == float(a.value) and ui.value == float(u)  # Python rounds int -> float correctly


@pytest.mark.parametrize("x, w, signed, want", [
    (3.9, 8, True, 3), (-3.9, 8, True, -3), (127.5, 8, True, 127), (128.0, 8, True, None), (-129.0, 8, True, None),
    (255.9, 8, False, 255), (-0.5, 8, False, 0), (-1.0, 8, False, None), (math.nan, 32, True, None),
    (math.inf, 64, True, None), (2.0 ** 63, 64, True, None), (2.0 ** 63, 64, False, 2 ** 63),
])
def test_float_to_integer_casts(x: float, w: int, signed: bool, want: int | None):
    a = lir.FloatAttr.get(x, lir.f64)
    cls = arith.FPToSIOp if signed else arith.FPToUIOp
    got = cls.build(const(a), I[w]).fold([a])
    if want is None:
        assert got is None
    else:
        assert got[0] == lir.IntegerAttr(I[w], want)


def test_integer_casts_wrap_and_extend():
    m1 = int_attr(8, -1)
    assert arith.ExtSIOp.build(const(m1), I[32]).fold([m1])[0] == int_attr(32, -1)
    assert arith.ExtUIOp.build(const(m1), I[32]).fold([m1])[0] == int_attr(32, 255)
    big = int_attr(32, 0x12345678)
    assert arith.TruncIOp.build(const(big), I[8]).fold([big])[0] == int_attr(8, 0x78)
    assert arith.IndexCastOp.build(const(m1), lir.index).fold([m1])[0] == lir.IntegerAttr(lir.index, -1)
    assert arith.IndexCastUIOp.build(const(m1), lir.index).fold([m1])[0] == lir.IntegerAttr(lir.index, 255)
    one = lir.FloatAttr.get(1.0, lir.f32)
    assert arith.BitcastOp.build(const(one), I[32]).fold([one])[0] == int_attr(32, 0x3F800000)
    # truncf folds only exact values, as upstream
    tenth = lir.FloatAttr.get(0.1, lir.f64)
    assert arith.TruncFOp.build(const(tenth), lir.f32).fold([tenth]) is None
    half = lir.FloatAttr.get(0.5, lir.f64)
    assert arith.TruncFOp.build(const(half), lir.f32).fold([half])[0] == lir.FloatAttr.get(0.5, lir.f32)


def test_splat_and_dense_folds():
    t = lir.VectorType((4,), I[32])
    a = lir.DenseElementsAttr.get(np.array([1, -2, 3, 2 ** 31 - 1]), t)
    two = lir.DenseElementsAttr.get(np.int32(2), t)
    assert two.splat
    got = fold_binary("arith.muli", a, two)
    assert list(got.to_numpy()) == [2, -4, 6, -2]
    zero = lir.DenseElementsAttr.get(np.int32(0), t)
    x = lir.Block([t]).args[0]
    op = arith.AddIOp.build(x, const(zero))
    assert op.fold([None, zero]) == [x]  # addi(x, splat 0) -> x
    assert fold_binary("arith.divsi", a, zero) is None
    cmp = arith.CmpIOp.build("sgt", const(a), const(two))
    assert list(cmp.fold([a, two])[0].to_numpy()) == [False, False, True, True]
    assert cmp.result.type == lir.VectorType((4,), I[1])


def test_structural_folds():
    block = lir.Block([I[32], I[32], I[1]])
    x, y, c = block.args
    zero, one, ones = (const(int_attr(32, v)) for v in (0, 1, -1))
    for op_cls, operands, want in [
        (arith.AddIOp, (x, zero), x), (arith.SubIOp, (x, zero), x), (arith.MulIOp, (x, one), x),
        (arith.MulIOp, (x, zero), zero), (arith.AndIOp, (x, x), x), (arith.OrIOp, (x, x), x),
        (arith.AndIOp, (x, ones), x), (arith.OrIOp, (x, zero), x), (arith.XOrIOp, (x, zero), x),
        (arith.DivSIOp, (x, one), x), (arith.MaxSIOp, (x, x), x), (arith.MinUIOp, (x, x), x),
    ]:
        op = op_cls.build(*operands)
        assert op.fold([constant_of(v) for v in operands]) == [want], op_cls.name
    assert arith.SubIOp.build(x, x).fold([None, None]) == [int_attr(32, 0)]
    assert arith.XOrIOp.build(x, x).fold([None, None]) == [int_attr(32, 0)]
    assert arith.OrIOp.build(x, ones).fold([None, int_attr(32, -1)]) == [int_attr(32, -1)]
    assert arith.CmpIOp.build("sle", x, x).fold([None, None]) == [lir.BoolAttr(True)]
    assert arith.CmpIOp.build("ult", x, x).fold([None, None]) == [lir.BoolAttr(False)]
    assert arith.SelectOp.build(c, x, x).fold([None, None, None]) == [x]
    t = const(lir.BoolAttr(True))
    assert arith.SelectOp.build(t, x, y).fold([lir.BoolAttr(True), None, None]) == [x]
    # x + y - y -> x ; (x - y) + y -> x
    add = arith.AddIOp.build(x, y)
    assert arith.SubIOp.build(add.result, y).fold([None, None]) == [x]
    sub = arith.SubIOp.build(x, y)
    assert arith.AddIOp.build(sub.result, y).fold([None, None]) == [x]


def test_in_place_folds():
    block = lir.Block([I[32], I[8]])
    x, b = block.args
    c5 = const(int_attr(32, 5))
    cmp = arith.CmpIOp.build("slt", c5, x)
    assert cmp.fold([int_attr(32, 5), None]) == [cmp.result]  # constant moved right: 5 < x  <=>  x > 5
    assert cmp.predicate_name == "sgt" and cmp.operands == (x, c5)
    inner = arith.ExtSIOp.build(b, I[16])
    outer = arith.ExtSIOp.build(inner.result, I[64])
    assert outer.fold([None]) == [outer.result] and outer.operands == (b,)


def test_float_structural_folds():
    block = lir.Block([lir.f32])
    x = block.args[0]
    negzero, zero, one = (lir.FloatAttr.get(v, lir.f32) for v in (-0.0, 0.0, 1.0))
    assert arith.AddFOp.build(x, const(negzero)).fold([None, negzero]) == [x]
    assert arith.AddFOp.build(x, const(zero)).fold([None, zero]) is None  # x + 0.0 is not x for x = -0.0
    assert arith.SubFOp.build(x, const(zero)).fold([None, zero]) == [x]
    assert arith.MulFOp.build(x, const(one)).fold([None, one]) == [x]
    neg = arith.NegFOp.build(x)
    assert arith.NegFOp.build(neg.result).fold([None]) == [x]
    nan = lir.FloatAttr.get(math.nan, lir.f32)
    assert arith.CmpFOp.build("olt", x, const(nan)).fold([None, nan]) == [lir.BoolAttr(False)]
    assert arith.CmpFOp.build("uge", x, const(nan)).fold([None, nan]) == [lir.BoolAttr(True)]


# Against MLIR's canonicalizer ------------------------------------------------------------------

def _jaxlib_canonicalize(text: str):
    jax_mlir = pytest.importorskip("jax._src.interpreters.mlir", reason="jax is the oracle for MLIR's folders")
    from jax._src.lib.mlir import ir, passmanager
    ctx = jax_mlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        return module, ir


def _jaxlib_returned(text: str) -> dict[str, str | None]:
    """After canonicalize: per function, the text of the returned constant, `%argN`, or None when
    the op was not folded."""
    module, ir = _jaxlib_canonicalize(text)
    out: dict[str, str | None] = {}
    with module.context:
        for f in module.body.operations:
            name = ir.StringAttr(f.attributes["sym_name"]).value
            ops = f.regions[0].blocks[0].operations
            v = ops[len(ops) - 1].operands[0]
            if isinstance(v.owner, ir.Block):
                out[name] = f"%arg{ir.BlockArgument(v).arg_number}"
            elif v.owner.name == "arith.constant":
                out[name] = str(v.owner.attributes["value"])
            else:
                out[name] = None
    return out


def _loom_returned(text: str) -> dict[str, str | None]:
    """The same from loom's fold hooks, called on each function's last op."""
    module = lir.parse(text)
    out: dict[str, str | None] = {}
    for f in module.body.ops:
        op = f.regions[0].blocks[0].last_op.operands[0].owner_op
        constants = [constant_of(v) for v in op.operands]
        for i in range(1, len(constants)):  # the canonicalizer uniques equal constants first
            for j in range(i):
                if constants[i] is not None and constants[i] is constants[j]:
                    op.set_operand(i, op.operands[j])
        folded = op.fold([constant_of(v) for v in op.operands])
        name = f.properties["sym_name"].value
        if folded is None or folded[0] is op.results[0]:
            out[name] = None
        elif isinstance(folded[0], lir.Attribute):
            out[name] = str(folded[0])
        elif isinstance(folded[0], lir.BlockArgument):
            out[name] = f"%arg{folded[0].index}"
        else:
            out[name] = str(constant_of(folded[0]))
    return out


def _constant_text(t: str, v: int) -> str:
    if t in FLOAT_TYPES:
        return f"arith.constant 0x{v:X} : {t}"
    if t == "i1":
        return f"arith.constant {'true' if v else 'false'}"
    return f"arith.constant {v} : {t}"


def _single_op_functions(op: str, types: list[str], values, unary_to: dict[str, list[str]] | None = None,
                         predicates: tuple[str, ...] = ()) -> list[str]:
    funcs = []
    for t in types:
        vals = values(t)
        if unary_to is not None:
            for d in unary_to[t]:
                for a in vals:
                    funcs.append(f"func.func @f{len(funcs)}() -> {d} {{\n  %a = {_constant_text(t, a)}\n"
                                 f"  %r = arith.{op} %a : {t} to {d}\n  return %r : {d}\n}}")
            continue
        result = "i1" if predicates else t
        for p in predicates or ("",):
            pred = f"{p}, " if p else ""
            for a in vals:
                for b in (vals if not op.startswith("sh") else _shift_amounts(t)):
                    funcs.append(f"func.func @f{len(funcs)}() -> {result} {{\n  %a = {_constant_text(t, a)}\n"
                                 f"  %b = {_constant_text(t, b)}\n  %r = arith.{op} {pred}%a, %b : {t}\n"
                                 f"  return %r : {result}\n}}")
    return funcs


WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64}


def _int_values(t: str) -> list[int]:
    w = WIDTHS[t]
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    rng = random.Random(w)
    return sorted({v for v in (0, 1, -1, 2, -3, 7, lo, hi, lo + 1, rng.randint(lo, hi)) if lo <= v <= hi})


def _shift_amounts(t: str) -> list[int]:
    w = WIDTHS[t]
    return [0, 1] if w == 1 else [0, 1, 3, w - 1, w, w + 1] if w < 64 else [0, 1, 63, 64, 65]


def _float_values(t: str) -> list[int]:
    ft, dtype = FLOAT_TYPES[t]
    info = ml_dtypes.finfo(dtype)
    bits = [lir.FloatAttr.get(float(x), ft).bits for x in (0.0, -0.0, 1.0, -2.5, 0.1, 3.0, float(info.max),
                                                            float(info.smallest_subnormal), math.inf, -math.inf)]
    exponent = ((1 << (ft.width - ft.precision + 1)) - 1) << (ft.precision - 1)
    quiet = 1 << (ft.precision - 2)
    return bits + [exponent | quiet, (1 << (ft.width - 1)) | exponent | quiet | 5, exponent | 1]  # qNaN, -qNaN, sNaN


INT_OPS = ["addi", "subi", "muli", "divui", "divsi", "ceildivui", "ceildivsi", "floordivsi", "remui", "remsi",
           "andi", "ori", "xori", "shli", "shrui", "shrsi", "maxsi", "maxui", "minsi", "minui"]
FLOAT_OPS = ["addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf"]
CASTS = {
    "extsi": {"i1": ["i8", "i64"], "i8": ["i16", "i64"], "i32": ["i64"]},
    "extui": {"i1": ["i8", "i64"], "i8": ["i16", "i64"], "i32": ["i64"]},
    "trunci": {"i64": ["i32", "i1"], "i16": ["i8"]},
    "sitofp": {"i8": ["f16", "f32"], "i64": ["bf16", "f32", "f64"], "i1": ["f32"]},
    "uitofp": {"i8": ["f16", "f32"], "i64": ["bf16", "f32", "f64"], "i1": ["f32"]},
    "fptosi": {"f32": ["i8", "i64"], "f64": ["i1", "i32", "i64"], "f16": ["i8"]},
    "fptoui": {"f32": ["i8", "i64"], "f64": ["i1", "i32", "i64"], "bf16": ["i8"]},
    "extf": {"f16": ["f32", "f64"], "bf16": ["f32"], "f32": ["f64"]},
    "truncf": {"f64": ["f32", "f16", "bf16"], "f32": ["f16", "bf16"]},
    "index_cast": {"i8": ["index"], "i64": ["index"], "index": ["i16", "i64"]},
    "index_castui": {"i8": ["index"], "i64": ["index"], "index": ["i16", "i64"]},
    "bitcast": {"i32": ["f32"], "f32": ["i32"], "f16": ["bf16", "i16"], "f64": ["i64"]},
}


def _cast_values(t: str) -> list[int]:
    if t in FLOAT_TYPES:
        ft = FLOAT_TYPES[t][0]
        extra = [lir.FloatAttr.get(x, ft).bits for x in (0.5, -0.5, 255.0, 256.0, -128.0, 127.9, 65504.0, 1e10,
                                                          -1e10, 2.0 ** 63, -(2.0 ** 63))]
        return sorted(set(_float_values(t) + extra))
    return _int_values(t) + ([(1 << 53) + 1, (1 << 62) + 12345] if WIDTHS[t] == 64 else [])


def _assert_same(funcs: list[str]) -> None:
    text = "\n".join(funcs)
    want, got = _jaxlib_returned(text), _loom_returned(text)
    bad = [(funcs[int(k[1:])].replace("\n", " "), want[k], got[k]) for k in want if want[k] != got[k]]
    assert not bad, f"{len(bad)} of {len(funcs)} differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("op", INT_OPS)
def test_integer_folds_match_mlir(op: str):
    _assert_same(_single_op_functions(op, ["i1", "i8", "i64", "index"], _int_values))


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_folds_match_mlir(op: str):
    _assert_same(_single_op_functions(op, ["f16", "bf16", "f32", "f64"], _float_values))


def test_negf_folds_match_mlir():
    funcs = [f"func.func @f{i}() -> {t} {{\n  %a = {_constant_text(t, v)}\n  %r = arith.negf %a : {t}\n"
             f"  return %r : {t}\n}}" for i, (t, v) in enumerate((t, v) for t in FLOAT_TYPES for v in _float_values(t))]
    _assert_same(funcs)


@pytest.mark.parametrize("op", sorted(CASTS))
def test_cast_folds_match_mlir(op: str):
    _assert_same(_single_op_functions(op, sorted(CASTS[op]), _cast_values, unary_to=CASTS[op]))


def test_cmpi_folds_match_mlir():
    _assert_same(_single_op_functions("cmpi", ["i1", "i8", "i64", "index"], lambda t: _int_values(t)[::2] + [0, 1],
                                      predicates=arith.CMPI_PREDICATES))


def test_cmpf_folds_match_mlir():
    _assert_same(_single_op_functions("cmpf", ["f16", "f64"], lambda t: _float_values(t)[::2] + _float_values(t)[-3:],
                                      predicates=arith.CMPF_PREDICATES))


def test_dense_folds_match_mlir():
    vectors = ["dense<[1, -2, 127, -128]>", "dense<[0, 3, 1, 2]>", "dense<5>", "dense<0>", "dense<[8, 1, 2, 3]>",
               "dense<-1>"]
    funcs = []
    for op in INT_OPS:
        for t in ("vector<4xi8>", "tensor<4xi8>"):
            for a in vectors:
                for b in vectors:
                    funcs.append(f"func.func @f{len(funcs)}() -> {t} {{\n  %a = arith.constant {a} : {t}\n"
                                 f"  %b = arith.constant {b} : {t}\n  %r = arith.{op} %a, %b : {t}\n"
                                 f"  return %r : {t}\n}}")
    floats = ["dense<[1.0, -2.5, 0.0, -0.0]>", "dense<1.0>", "dense<[0x7FC00000, 1.0, 0xFF800000, 3.0]>",
              "dense<-0.0>"]
    for op in FLOAT_OPS:
        for a in floats:
            for b in floats:
                funcs.append(f"func.func @f{len(funcs)}() -> vector<4xf32> {{\n"
                             f"  %a = arith.constant {a} : vector<4xf32>\n  %b = arith.constant {b} : vector<4xf32>\n"
                             f"  %r = arith.{op} %a, %b : vector<4xf32>\n  return %r : vector<4xf32>\n}}")
    for c in ("dense<[true, false, true, false]>", "dense<true>"):
        for a in vectors[:3]:
            funcs.append(f"func.func @f{len(funcs)}() -> vector<4xi8> {{\n  %c = arith.constant {c} : vector<4xi1>\n"
                         f"  %a = arith.constant {a} : vector<4xi8>\n  %b = arith.constant dense<9> : vector<4xi8>\n"
                         f"  %r = arith.select %c, %a, %b : vector<4xi1>, vector<4xi8>\n  return %r : vector<4xi8>\n}}")
    for op, d in (("extsi", "vector<4xi32>"), ("trunci", "vector<4xi1>"), ("sitofp", "vector<4xf32>"),
                  ("uitofp", "vector<4xf16>"), ("index_cast", "vector<4xindex>")):
        for a in vectors:
            funcs.append(f"func.func @f{len(funcs)}() -> {d} {{\n  %a = arith.constant {a} : vector<4xi8>\n"
                         f"  %r = arith.{op} %a : vector<4xi8> to {d}\n  return %r : {d}\n}}")
    _assert_same(funcs)


# Canonicalization end to end (loom's greedy driver with these folds and patterns) ------------

CANONICALIZE_PROGRAMS = {
    "int_identities": """
func.func @f(%x: i32, %y: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %m1 = arith.constant -1 : i32
  %0 = arith.addi %c0, %x : i32
  %1 = arith.subi %x, %x : i32
  %2 = arith.muli %c0, %x : i32
  %3 = arith.andi %x, %x : i32
  %4 = arith.ori %x, %m1 : i32
  %5 = arith.xori %x, %x : i32
  %6 = arith.divsi %x, %c1 : i32
  %7 = arith.remui %x, %c1 : i32
  %s = arith.subi %x, %y : i32
  %8 = arith.addi %s, %y : i32
  %a = arith.addi %x, %y : i32
  %9 = arith.subi %a, %x : i32
  %n = arith.xori %x, %m1 : i32
  %10 = arith.andi %x, %n : i32
  %11 = arith.ori %n, %x : i32
  %12 = arith.andi %x, %a : i32
  %13 = arith.andi %x, %12 : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %13, %12 : i32, i32, i32, i32, i32, i32, i32, i32,
    i32, i32, i32, i32, i32, i32
}""",
    "cmpi_and_select": """
func.func @f(%x: i32, %y: i32, %b: i1, %v: vector<4xi32>) -> (i1, i1, i1, i1, i1, vector<4xi1>, i1, i32, i32,
    i64, i64, i1) {
  %c5 = arith.constant 5 : i32
  %c0 = arith.constant 0 : i32
  %t = arith.constant true
  %f = arith.constant false
  %0 = arith.cmpi slt, %c5, %x : i32
  %1 = arith.cmpi sle, %x, %x : i32
  %2 = arith.cmpi ne, %b, %f : i1
  %e = arith.extui %b : i1 to i32
  %3 = arith.cmpi ne, %e, %c0 : i32
  %4 = arith.cmpi ugt, %c5, %x : i32
  %5 = arith.cmpi ult, %v, %v : vector<4xi32>
  %c = arith.cmpi slt, %x, %c5 : i32
  %6 = arith.xori %c, %t : i1
  %eq = arith.cmpi eq, %x, %y : i32
  %7 = arith.select %eq, %x, %y : i32
  %8 = arith.select %b, %x, %x : i32
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %9 = arith.select %b, %one, %zero : i64
  %10 = arith.select %b, %zero, %one : i64
  %11 = arith.select %b, %f, %t : i1
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : i1, i1, i1, i1, i1, vector<4xi1>, i1, i32, i32, i64, i64, i1
}""",
    "constants_move_right_and_chain": """
func.func @f(%x: i32, %y: f32) -> (i32, i32, f32, i32) {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %f2 = arith.constant 2.0 : f32
  %0 = arith.muli %c2, %x : i32
  %1 = arith.addi %x, %c2 overflow<nsw> : i32
  %2 = arith.addi %1, %c3 overflow<nsw, nuw> : i32
  %3 = arith.mulf %f2, %y : f32
  %4 = arith.maxsi %c2, %x : i32
  return %0, %2, %3, %4 : i32, i32, f32, i32
}""",
    "float_identities": """
func.func @f(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %z = arith.constant 0.0 : f32
  %nz = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %0 = arith.addf %x, %nz : f32
  %1 = arith.addf %x, %z : f32
  %2 = arith.subf %x, %z : f32
  %3 = arith.divf %x, %one : f32
  %4 = arith.maximumf %x, %ninf : f32
  %5 = arith.maxnumf %x, %nan : f32
  %n = arith.negf %x : f32
  %6 = arith.negf %n : f32
  %7 = arith.mulf %x, %z fastmath<nnan,nsz> : f32
  %8 = arith.minimumf %x, %x : f32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f32, f32, f32, f32, f32, f32
}""",
    "cast_chains": """
func.func @f(%x: i8, %y: i64, %h: f16, %d: f64, %i: index, %j: i32) -> (i64, i64, i8, i16, f16, f32, index,
    i32, f64, i32, i32) {
  %0 = arith.extsi %x : i8 to i16
  %1 = arith.extsi %0 : i16 to i64
  %2 = arith.extui %x : i8 to i32
  %3 = arith.extui %2 : i32 to i64
  %4 = arith.trunci %y : i64 to i32
  %5 = arith.trunci %4 : i32 to i16
  %6 = arith.extsi %x : i8 to i32
  %7 = arith.trunci %6 : i32 to i8
  %e = arith.extf %h : f16 to f32
  %8 = arith.truncf %e : f32 to f16
  %9 = arith.extf %h : f16 to f64
  %10 = arith.truncf %9 : f64 to f32
  %11 = arith.index_cast %j : i32 to index
  %12 = arith.index_cast %11 : index to i32
  %13 = arith.index_cast %i : index to i32
  %14 = arith.index_cast %13 : i32 to index
  %tc = arith.truncf %d fastmath<contract> : f64 to f32
  %15 = arith.extf %tc fastmath<contract> : f32 to f64
  %b1 = arith.bitcast %j : i32 to f32
  %16 = arith.bitcast %b1 : f32 to i32
  %w = arith.index_castui %j : i32 to index
  %17 = arith.index_castui %w : index to i32
  return %1, %3, %7, %5, %8, %10, %14, %12, %15, %16, %17 : i64, i64, i8, i16, f16, f32, index, i32, f64, i32, i32
}""",
    "shaped_constants": """
func.func @f(%v: vector<4xi32>) -> (vector<4xi32>, vector<4xi32>, tensor<2x2xf32>, vector<4xi32>,
    tensor<3xi1>, tensor<3xi32>, tensor<2xf32>) {
  %z = arith.constant dense<0> : vector<4xi32>
  %a = arith.constant dense<[1, 2, 3, 4]> : vector<4xi32>
  %b = arith.constant dense<[10, -20, 30, -40]> : vector<4xi32>
  %c = arith.constant dense<1.5> : tensor<2x2xf32>
  %d = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %0 = arith.addi %v, %z : vector<4xi32>
  %1 = arith.muli %a, %b : vector<4xi32>
  %2 = arith.addf %c, %d : tensor<2x2xf32>
  %3 = arith.divsi %b, %a : vector<4xi32>
  %x = arith.constant dense<[1, 5, -3]> : tensor<3xi32>
  %y = arith.constant dense<[2, 5, -7]> : tensor<3xi32>
  %4 = arith.cmpi slt, %x, %y : tensor<3xi32>
  %5 = arith.select %4, %x, %y : tensor<3xi1>, tensor<3xi32>
  %s = arith.constant dense<[7, -7]> : tensor<2xi32>
  %6 = arith.sitofp %s : tensor<2xi32> to tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6 : vector<4xi32>, vector<4xi32>, tensor<2x2xf32>, vector<4xi32>,
    tensor<3xi1>, tensor<3xi32>, tensor<2xf32>
}""",
    "calls_kept_dead_code_removed": """
func.func private @ext(i32) -> i32
func.func @f(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %0 = arith.addi %c1, %c2 : i32
  %1 = call @ext(%0) : (i32) -> i32
  %2 = call @ext(%1) : (i32) -> i32
  %dead = arith.divsi %x, %x : i32
  return %1 : i32
}""",
    "div_of_mul": """
func.func @f(%x: i32, %y: i32) -> (i32, i32, i32, i32) {
  %m = arith.muli %x, %y overflow<nsw> : i32
  %0 = arith.divsi %m, %y : i32
  %mu = arith.muli %x, %y overflow<nuw> : i32
  %1 = arith.divui %mu, %x : i32
  %m2 = arith.muli %x, %y : i32
  %2 = arith.divsi %m2, %y : i32
  %3 = arith.divui %mu, %y : i32
  return %0, %1, %2, %3 : i32, i32, i32, i32
}""",
}


def _loom_canonicalize(module: lir.Operation) -> None:
    import loom.rewrite as rewrite
    patterns = []
    for name in sorted(arith.ARITH_OPS + [func.FuncOp, func.ReturnOp, func.CallOp], key=lambda c: c.name):
        patterns.extend(name.canonicalization_patterns())
    rewrite.apply_patterns_greedily(module, patterns, config=rewrite.GreedyRewriteConfig(top_down=True))


@pytest.mark.parametrize("name", sorted(CANONICALIZE_PROGRAMS))
def test_canonicalize_matches_mlir(name: str):
    text = CANONICALIZE_PROGRAMS[name]
    module, _ = _jaxlib_canonicalize(text)
    want = module.operation.get_asm(print_generic_op_form=True)
    ours = lir.parse(text)
    _loom_canonicalize(ours)
    assert lir.print(ours, generic=True) == want


def test_canonicalize_corpus():
    """The generated canonicalize corpus (tests/corpus/canonicalize), committed with the tests."""
    folder = CORPUS / "canonicalize"
    cases = sorted(folder.glob("*.canonicalize.expected.mlir"))
    assert cases, f"the canonicalize corpus is missing from {folder}"
    for expected in cases:
        module = lir.parse(expected.with_name(expected.name.replace(".canonicalize.expected", ".input")).read_text(),
                           allow_unregistered=True)
        _loom_canonicalize(module)
        assert lir.print(module, generic=True) == expected.read_text(), expected.name


# Canonicalization patterns against MLIR -------------------------------------------------------
#
# Programs that exercise each of arith's canonicalization patterns (and the cases they must leave
# alone), canonicalized by jaxlib and by loom's canonicalize pass; the generic prints, with
# locations, must agree byte for byte.

ARITH_PATTERN_PROGRAMS = {
    "addi_subi_muli_constant_chains": """
func.func @f(%x: i32, %y: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %c3 = arith.constant 3 : i32
  %c5 = arith.constant 5 : i32
  %a0 = arith.addi %x, %c3 overflow<nsw> : i32
  %0 = arith.addi %a0, %c5 overflow<nsw, nuw> : i32
  %s0 = arith.subi %x, %c3 overflow<nuw> : i32
  %1 = arith.addi %s0, %c5 overflow<nuw> : i32
  %s1 = arith.subi %c3, %x overflow<nsw, nuw> : i32
  %2 = arith.addi %s1, %c5 overflow<nsw> : i32
  %a1 = arith.addi %x, %c3 overflow<nsw, nuw> : i32
  %3 = arith.subi %a1, %c5 overflow<nsw, nuw> : i32
  %4 = arith.subi %c5, %a1 overflow<nsw> : i32
  %5 = arith.subi %s0, %c5 overflow<nuw> : i32
  %6 = arith.subi %s1, %c5 overflow<nsw, nuw> : i32
  %7 = arith.subi %c5, %s0 overflow<nuw> : i32
  %8 = arith.subi %c5, %s1 overflow<nsw> : i32
  %d = arith.subi %x, %y overflow<nsw> : i32
  %9 = arith.subi %d, %x overflow<nsw> : i32
  %m0 = arith.muli %x, %c3 overflow<nuw> : i32
  %10 = arith.muli %m0, %c5 overflow<nsw, nuw> : i32
  %11 = arith.subi %y, %d : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32,
    i32
}""",
    "constant_chains_wrap_index_and_vectors": """
func.func @f(%x: i8, %i: index, %v: vector<4xi16>) -> (i8, i8, i8, index, index, vector<4xi16>, vector<4xi16>) {
  %c100 = arith.constant 100 : i8
  %cm128 = arith.constant -128 : i8
  %c16 = arith.constant 16 : i8
  %a = arith.addi %x, %c100 : i8
  %0 = arith.addi %a, %c100 : i8
  %s = arith.subi %cm128, %x : i8
  %1 = arith.subi %s, %c100 : i8
  %m = arith.muli %x, %c16 : i8
  %2 = arith.muli %m, %c16 : i8
  %k = arith.constant 7 : index
  %ia = arith.subi %i, %k : index
  %3 = arith.subi %ia, %k : index
  %im = arith.muli %i, %k : index
  %4 = arith.muli %im, %k overflow<nsw> : index
  %sv = arith.constant dense<3> : vector<4xi16>
  %va = arith.addi %v, %sv : vector<4xi16>
  %5 = arith.addi %va, %sv : vector<4xi16>
  %vd = arith.subi %v, %sv : vector<4xi16>
  %6 = arith.subi %vd, %v : vector<4xi16>
  return %0, %1, %2, %3, %4, %5, %6 : i8, i8, i8, index, index, vector<4xi16>, vector<4xi16>
}""",
    "addi_of_muli_minus_one": """
func.func @f(%x: i32, %y: i32, %v: vector<2xi64>, %w: vector<2xi64>) -> (i32, i32, i32, vector<2xi64>, i32) {
  %m1 = arith.constant -1 : i32
  %c2 = arith.constant 2 : i32
  %my = arith.muli %y, %m1 overflow<nsw> : i32
  %0 = arith.addi %x, %my overflow<nsw> : i32
  %mx = arith.muli %x, %m1 : i32
  %1 = arith.addi %mx, %y overflow<nuw> : i32
  %2 = arith.addi %mx, %my : i32
  %vm1 = arith.constant dense<-1> : vector<2xi64>
  %mw = arith.muli %w, %vm1 : vector<2xi64>
  %3 = arith.addi %v, %mw : vector<2xi64>
  %m2 = arith.muli %y, %c2 : i32
  %4 = arith.addi %x, %m2 : i32
  return %0, %1, %2, %3, %4 : i32, i32, i32, vector<2xi64>, i32
}""",
    "bitwise_constant_chains": """
func.func @f(%x: i32, %i: index, %v: vector<2xi32>) -> (i32, i32, i32, i32, index, vector<2xi32>) {
  %c6 = arith.constant 6 : i32
  %c3 = arith.constant 3 : i32
  %a = arith.andi %x, %c6 : i32
  %0 = arith.andi %a, %c3 : i32
  %o = arith.ori %x, %c6 : i32
  %1 = arith.ori %o, %c3 : i32
  %e = arith.xori %x, %c6 : i32
  %2 = arith.xori %e, %c3 : i32
  %n = arith.maxsi %x, %c6 : i32
  %3 = arith.maxsi %n, %c3 : i32
  %k = arith.constant 12 : index
  %k2 = arith.constant 10 : index
  %ia = arith.andi %i, %k : index
  %4 = arith.andi %ia, %k2 : index
  %s = arith.constant dense<3> : vector<2xi32>
  %vo = arith.ori %v, %s : vector<2xi32>
  %5 = arith.ori %vo, %s : vector<2xi32>
  return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, index, vector<2xi32>
}""",
    "bitwise_of_extensions": """
func.func @f(%a: i8, %b: i8, %c: i16, %v: vector<3xi1>, %w: vector<3xi1>) -> (i32, i32, i32, i32, i32, i32, i32,
    vector<3xi8>, i64, i32, i32) {
  %ua = arith.extui %a nneg : i8 to i32
  %ub = arith.extui %b : i8 to i32
  %sa = arith.extsi %a : i8 to i32
  %sb = arith.extsi %b : i8 to i32
  %uc = arith.extui %c : i16 to i32
  %0 = arith.andi %ua, %ub : i32
  %1 = arith.andi %sa, %sb : i32
  %2 = arith.ori %ua, %ub : i32
  %3 = arith.ori %sa, %sb : i32
  %4 = arith.xori %ua, %ub : i32
  %5 = arith.xori %sa, %sb : i32
  %6 = arith.andi %ua, %uc : i32
  %ev = arith.extui %v : vector<3xi1> to vector<3xi8>
  %ew = arith.extui %w : vector<3xi1> to vector<3xi8>
  %7 = arith.ori %ev, %ew : vector<3xi8>
  %u64 = arith.extui %a : i8 to i64
  %s64 = arith.extsi %a : i8 to i64
  %8 = arith.andi %u64, %s64 : i64
  %ub2 = arith.extui %b nneg : i8 to i32
  %9 = arith.ori %ua, %ub2 : i32
  %10 = arith.xori %ub2, %ub : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : i32, i32, i32, i32, i32, i32, i32, vector<3xi8>, i64, i32, i32
}""",
    "cmpi_of_extensions_and_xori_of_cmpi": """
func.func @f(%a: i8, %b: i8, %c: i16, %v: vector<2xi8>, %w: vector<2xi8>, %x: i32, %y: i32) -> (i1, i1, i1, i1, i1,
    vector<2xi1>, i1, i1, i1, vector<2xi1>) {
  %sa = arith.extsi %a : i8 to i32
  %sb = arith.extsi %b : i8 to i32
  %ua = arith.extui %a : i8 to i32
  %ub = arith.extui %b : i8 to i32
  %sc = arith.extsi %c : i16 to i32
  %0 = arith.cmpi eq, %sa, %sb : i32
  %1 = arith.cmpi ne, %ua, %ub : i32
  %2 = arith.cmpi slt, %sa, %sb : i32
  %3 = arith.cmpi eq, %sa, %sc : i32
  %4 = arith.cmpi ne, %sa, %ub : i32
  %ev = arith.extsi %v : vector<2xi8> to vector<2xi64>
  %ew = arith.extsi %w : vector<2xi8> to vector<2xi64>
  %5 = arith.cmpi ne, %ev, %ew : vector<2xi64>
  %6 = arith.cmpi ult, %ua, %ub : i32
  %t = arith.constant true
  %u = arith.cmpi uge, %x, %y : i32
  %7 = arith.xori %u, %t : i1
  %e = arith.cmpi eq, %x, %y : i32
  %8 = arith.xori %t, %e : i1
  %vt = arith.constant dense<true> : vector<2xi1>
  %vc = arith.cmpi slt, %v, %w : vector<2xi8>
  %9 = arith.xori %vc, %vt : vector<2xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i1, i1, i1, i1, i1, vector<2xi1>, i1, i1, i1, vector<2xi1>
}""",
    "select_patterns": """
func.func @f(%p: i1, %q: i1, %x: i32, %y: i32, %z: i32, %vc: vector<2xi1>, %vx: vector<2xf32>, %vy: vector<2xf32>)
    -> (i32, i32, i32, i32, i32, i1, i64, i64, vector<2xf32>, i32, i1) {
  %t = arith.constant true
  %f = arith.constant false
  %s0 = arith.select %p, %x, %y : i32
  %0 = arith.select %p, %s0, %z : i32
  %1 = arith.select %p, %z, %s0 : i32
  %2 = arith.select %q, %s0, %z : i32
  %np = arith.xori %p, %t : i1
  %3 = arith.select %np, %x, %y : i32
  %4 = arith.select %np, %3, %z : i32
  %5 = arith.select %p, %f, %t : i1
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %6 = arith.select %p, %c1, %c0 : i64
  %7 = arith.select %np, %c0, %c1 : i64
  %vt = arith.constant dense<true> : vector<2xi1>
  %nvc = arith.xori %vc, %vt : vector<2xi1>
  %8 = arith.select %nvc, %vx, %vy : vector<2xi1>, vector<2xf32>
  %s1 = arith.select %np, %x, %y : i32
  %9 = arith.select %np, %z, %s1 : i32
  %10 = arith.select %np, %f, %t : i1
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : i32, i32, i32, i32, i32, i1, i64, i64, vector<2xf32>, i32, i1
}""",
    "select_of_cmpi_to_min_max": """
func.func @f(%x: i32, %y: i32, %f: f32, %g: f32, %a: vector<2xi32>, %b: vector<2xi32>, %j: index, %k: index, %p: i1,
    %q: i1) -> (i32, i32, i32, i32, i32, i32, i32, i32, f32, vector<2xi32>, i32, index, i1, i32) {
  %0 = arith.cmpi slt, %x, %y : i32
  %1 = arith.select %0, %x, %y : i32
  %2 = arith.cmpi sge, %x, %y : i32
  %3 = arith.select %2, %y, %x : i32
  %4 = arith.cmpi ule, %x, %y : i32
  %5 = arith.select %4, %y, %x : i32
  %6 = arith.cmpi ugt, %x, %y : i32
  %7 = arith.select %6, %x, %y : i32
  %8 = arith.cmpi eq, %x, %y : i32
  %9 = arith.select %8, %x, %y : i32
  %10 = arith.cmpi ne, %x, %y : i32
  %11 = arith.select %10, %y, %x : i32
  %12 = arith.cmpi sle, %x, %y : i32
  %13 = arith.select %12, %x, %x : i32
  %14 = arith.select %12, %y, %y : i32
  %15 = arith.cmpf olt, %f, %g : f32
  %16 = arith.select %15, %f, %g : f32
  %17 = arith.cmpi slt, %a, %b : vector<2xi32>
  %18 = arith.select %17, %a, %b : vector<2xi1>, vector<2xi32>
  %c5 = arith.constant 5 : i32
  %19 = arith.cmpi sgt, %c5, %x : i32
  %20 = arith.select %19, %c5, %x : i32
  %21 = arith.cmpi ult, %j, %k : index
  %22 = arith.select %21, %k, %j : index
  %23 = arith.cmpi ult, %p, %q : i1
  %24 = arith.select %23, %p, %q : i1
  %t = arith.constant true
  %25 = arith.cmpi slt, %x, %c5 : i32
  %26 = arith.xori %25, %t : i1
  %27 = arith.select %26, %x, %c5 : i32
  return %1, %3, %5, %7, %9, %11, %13, %14, %16, %18, %20, %22, %24, %27 : i32, i32, i32, i32, i32, i32, i32, i32,
    f32, vector<2xi32>, i32, index, i1, i32
}""",
    "integer_cast_chains": """
func.func @f(%a: i8, %b: i64, %v: vector<2xi8>) -> (index, index, i32, i16, i8, i32, i32, i16, i32, i16,
    vector<2xi32>, i32, i32) {
  %sa = arith.extsi %a : i8 to i32
  %0 = arith.index_cast %sa : i32 to index
  %ua = arith.extui %a nneg : i8 to i32
  %1 = arith.index_castui %ua : i32 to index
  %u16 = arith.extui %a nneg : i8 to i16
  %2 = arith.extsi %u16 : i16 to i32
  %s64 = arith.extsi %a : i8 to i64
  %3 = arith.trunci %s64 overflow<nsw> : i64 to i16
  %4 = arith.trunci %s64 : i64 to i8
  %u64 = arith.extui %a nneg : i8 to i64
  %5 = arith.trunci %u64 overflow<nuw> : i64 to i32
  %c32 = arith.constant 32 : i64
  %sh = arith.shrsi %b, %c32 exact : i64
  %6 = arith.trunci %sh overflow<nuw> : i64 to i32
  %7 = arith.trunci %sh : i64 to i16
  %c48 = arith.constant 48 : i64
  %sh2 = arith.shrsi %b, %c48 : i64
  %8 = arith.trunci %sh2 : i64 to i32
  %9 = arith.trunci %sh2 : i64 to i16
  %wv = arith.extsi %v : vector<2xi8> to vector<2xi64>
  %c32v = arith.constant dense<32> : vector<2xi64>
  %shv = arith.shrsi %wv, %c32v : vector<2xi64>
  %10 = arith.trunci %shv : vector<2xi64> to vector<2xi32>
  %bc0 = arith.bitcast %sa : i32 to f32
  %11 = arith.bitcast %bc0 : f32 to i32
  %bc1 = arith.bitcast %bc0 : f32 to i32
  %bc2 = arith.bitcast %bc1 : i32 to f32
  %12 = arith.fptosi %bc2 : f32 to i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : index, index, i32, i16, i8, i32, i32, i16, i32, i16,
    vector<2xi32>, i32, i32
}""",
    "float_cast_chains_and_negations": """
func.func @f(%a: i8, %b: i32, %x: f32, %y: f32, %v: vector<2xf64>) -> (f32, f32, f32, f32, f16, f16, f16, f16, f32, f32,
    vector<2xf64>, f32) {
  %ua = arith.extui %a nneg : i8 to i32
  %ub = arith.extui %a : i8 to i32
  %sa = arith.extsi %a : i8 to i32
  %0 = arith.uitofp %ua : i32 to f32
  %1 = arith.uitofp %ub nneg : i32 to f32
  %2 = arith.sitofp %ua : i32 to f32
  %3 = arith.sitofp %sa : i32 to f32
  %sb = arith.sitofp %b : i32 to f32
  %4 = arith.truncf %sb : f32 to f16
  %5 = arith.truncf %sb upward : f32 to f16
  %ubf = arith.uitofp %b nneg : i32 to f32
  %6 = arith.truncf %ubf fastmath<fast> : f32 to f16
  %7 = arith.truncf %ubf to_nearest_even : f32 to f16
  %nx = arith.negf %x fastmath<nnan> : f32
  %ny = arith.negf %y : f32
  %8 = arith.mulf %nx, %ny fastmath<fast> : f32
  %9 = arith.divf %nx, %ny : f32
  %nv = arith.negf %v : vector<2xf64>
  %10 = arith.mulf %nv, %nv fastmath<contract> : vector<2xf64>
  %11 = arith.mulf %nx, %y : f32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : f32, f32, f32, f32, f16, f16, f16, f16, f32, f32,
    vector<2xf64>, f32
}""",
}

# cmpf(sitofp/uitofp(x), constant) (CmpFIntToFPConst): predicates against constants around the integer ranges,
# fractions, infinities, NaN and values the integer cannot reach exactly in the float type.
_CMPF_CASES = [
    ("i8", "sitofp", "f32", c, p) for c in ("4.5", "-4.5", "-0.0", "127.0", "128.0", "-128.0", "-129.5", "0x7F800000",
                                            "0xFF800000", "0x7FC00000")
    for p in ("oeq", "one", "olt", "ole", "ogt", "oge", "ult", "uge", "ord", "uno")
] + [
    ("i8", "uitofp", "f16", c, p) for c in ("255.0", "255.5", "256.0", "-0.5", "3.25", "0.0")
    for p in ("ueq", "une", "ult", "ule", "ugt", "uge", "olt", "oge")
] + [
    (t, conv, ft, c, p)
    for t, conv, ft, c in (("i32", "sitofp", "f32", "16777216.0"), ("i32", "sitofp", "f32", "16777217.0"),
                           ("i32", "sitofp", "f32", "2147483648.0"), ("i32", "uitofp", "f32", "1.0e10"),
                           ("i64", "sitofp", "f64", "9.0e18"), ("i32", "sitofp", "f64", "0.5"),
                           ("i16", "uitofp", "bf16", "65536.0"), ("i1", "sitofp", "f32", "-1.0"),
                           ("i24", "uitofp", "f16", "0x7C00"), ("i64", "sitofp", "f16", "65504.0"))
    for p in ("oeq", "olt", "uge")
]


def _cmpf_program() -> str:
    lines, results = [], []
    for i, (t, conv, ft, c, p) in enumerate(_CMPF_CASES):
        lines.append(f"  %x{i} = arith.{conv} %{t} : {t} to {ft}\n  %k{i} = arith.constant {c} : {ft}\n"
                     f"  %r{i} = arith.cmpf {p}, %x{i}, %k{i} : {ft}")
        results.append(f"%r{i}")
    args = ", ".join(f"%{t}: {t}" for t in ("i1", "i8", "i16", "i24", "i32", "i64"))
    return (f"func.func @f({args}) -> ({', '.join(['i1'] * len(results))}) {{\n" + "\n".join(lines) +
            f"\n  return {', '.join(results)} : {', '.join(['i1'] * len(results))}\n}}")


ARITH_PATTERN_PROGRAMS["cmpf_of_int_to_fp"] = _cmpf_program()


def _jaxlib_canonicalized(text: str) -> str:
    """jaxlib's generic print, with locations, after canonicalize."""
    module, _ = _jaxlib_canonicalize(text)
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


def _loom_canonicalized(text: str) -> str:
    """The same from loom's canonicalize pass."""
    from loom.ir.printer import print_op
    from loom.rewrite import PassManager
    module = lir.parse(text, allow_unregistered=True)
    PassManager.parse("builtin.module(canonicalize)").run(module)
    return print_op(module, generic=True, debuginfo=True)


@pytest.mark.parametrize("name", sorted(ARITH_PATTERN_PROGRAMS))
def test_arith_patterns_match_mlir(name: str):
    text = ARITH_PATTERN_PROGRAMS[name]
    assert _loom_canonicalized(text) == _jaxlib_canonicalized(text)


def test_arith_patterns_are_upstreams():
    """Each op's patterns, by upstream's names (the benefit orders them: number of ops matched)."""
    def names(cls):
        return [(p.debug_name, p.benefit) for p in cls.canonicalization_patterns()]

    assert names(arith.AddIOp) == [("AddIAddConstant", 2), ("AddISubConstantRHS", 2), ("AddISubConstantLHS", 2),
                                   ("AddIMulNegativeOneRhs", 2), ("AddIMulNegativeOneLhs", 2)]
    assert names(arith.SubIOp) == [(n, 2) for n in ("SubIRHSAddConstant", "SubILHSAddConstant",
                                                    "SubIRHSSubConstantRHS", "SubIRHSSubConstantLHS",
                                                    "SubILHSSubConstantRHS", "SubILHSSubConstantLHS",
                                                    "SubISubILHSRHSLHS")]
    assert names(arith.SelectOp)[:4] == [("RedundantSelectFalse", 2), ("RedundantSelectTrue", 2),
                                         ("SelectNotCond", 2), ("SelectI1ToNot", 1)]
    assert names(arith.TruncIOp) == [("TruncIExtSIToExtSI", 2), ("TruncIExtUIToExtUI", 2),
                                     ("TruncIShrSIToTrunciShrUI", 2)]
    assert [n for n, _ in names(arith.CmpIOp)] == ["CmpIExtSI", "CmpIExtUI"]
    assert {n for n, _ in names(arith.XOrIOp)} >= {"XOrINotCmpI", "XOrIOfExtUI", "XOrIOfExtSI"}
    assert names(arith.ConstantOp) == [] and names(arith.NegFOp) == []


# Random straight-line programs: each line is a template whose `{type}` fields take an earlier value of that type
# and whose other fields take one of their choices.
_RANDOM_LINES = [
    ("i8", "arith.constant {k8} : i8"), ("i32", "arith.constant {k32} : i32"), ("i1", "arith.constant {kb}"),
    ("f32", "arith.constant {kf} : f32"), ("i64", "arith.constant 32 : i64"),
    ("i32", "arith.{ovf_op} {i32}, {i32}{ovf} : i32"), ("i8", "arith.{ovf_op} {i8}, {i8}{ovf} : i8"),
    ("i32", "arith.{int_op} {i32}, {i32} : i32"), ("i8", "arith.{int_op} {i8}, {i8} : i8"),
    ("i1", "arith.{bool_op} {i1}, {i1} : i1"), ("i1", "arith.cmpi {pred}, {i32}, {i32} : i32"),
    ("i1", "arith.cmpi {pred}, {i8}, {i8} : i8"), ("i1", "arith.cmpf {fpred}, {f32}, {f32} : f32"),
    ("i32", "arith.select {i1}, {i32}, {i32} : i32"), ("i8", "arith.select {i1}, {i8}, {i8} : i8"),
    ("i1", "arith.select {i1}, {i1}, {i1} : i1"), ("i32", "arith.extui {i8}{nneg} : i8 to i32"),
    ("i32", "arith.extsi {i8} : i8 to i32"), ("i8", "arith.extui {i1}{nneg} : i1 to i8"),
    ("i32", "arith.extsi {i1} : i1 to i32"), ("i8", "arith.trunci {i32}{ovf} : i32 to i8"),
    ("i64", "arith.extsi {i32} : i32 to i64"), ("i64", "arith.shrsi {i64}, {i64} : i64"),
    ("i32", "arith.trunci {i64} : i64 to i32"), ("index", "arith.index_cast {i32} : i32 to index"),
    ("index", "arith.index_castui {i32}{nneg} : i32 to index"), ("i32", "arith.index_cast {index} : index to i32"),
    ("i32", "arith.index_castui {index} : index to i32"), ("f32", "arith.{to_fp} {i32} : i32 to f32"),
    ("f32", "arith.{to_fp} {i8} : i8 to f32"), ("f32", "arith.negf {f32} : f32"),
    ("f32", "arith.{float_op} {f32}, {f32} : f32"), ("f16", "arith.truncf {f32} : f32 to f16"),
    ("f32", "arith.extf {f16} : f16 to f32"), ("f32", "arith.bitcast {i32} : i32 to f32"),
]
_RANDOM_CHOICES = {
    "k8": ["0", "1", "-1", "3", "8", "100", "-128"], "k32": ["0", "1", "-1", "2", "5", "24", "32"],
    "kb": ["true", "false"], "kf": ["0.0", "-0.0", "1.0", "4.5", "-3.0"],
    "ovf_op": ["addi", "subi", "muli"], "ovf": ["", " overflow<nsw>", " overflow<nuw>", " overflow<nsw, nuw>"],
    "int_op": ["andi", "ori", "xori", "maxsi", "minui", "shli", "shrsi", "divsi", "remui", "floordivsi"],
    "bool_op": ["andi", "ori", "xori"], "pred": ["eq", "ne", "slt", "sle", "ugt", "uge"],
    "fpred": ["oeq", "olt", "uge", "une", "ord"], "nneg": ["", " nneg"], "to_fp": ["sitofp", "uitofp"],
    "float_op": ["addf", "mulf", "divf"],
}
_RANDOM_ARGS = {"i8": "%a", "i32": "%b", "i1": "%p", "f32": "%x", "i64": "%d", "index": "%j", "f16": "%h"}


@st.composite
def _random_programs(draw) -> str:
    pool = {t: [v] for t, v in _RANDOM_ARGS.items()}
    lines, defined = [], []
    for i in range(draw(st.integers(1, 25))):
        t, template = draw(st.sampled_from(_RANDOM_LINES))
        lines.append(f"  %v{i} = " + re.sub(r"\{(\w+)\}", lambda field: draw(st.sampled_from(
            pool.get(field[1]) or _RANDOM_CHOICES[field[1]])), template))
        pool[t].append(f"%v{i}")
        defined.append((f"%v{i}", t))
    results = defined[-6:]
    types = ", ".join(t for _, t in results)
    args = ", ".join(f"{v}: {t}" for t, v in _RANDOM_ARGS.items())
    return (f"func.func @f({args}) -> ({types}) {{\n" + "\n".join(lines) +
            f"\n  return {', '.join(v for v, _ in results)} : {types}\n}}")


@settings(max_examples=150, deadline=None)
@given(_random_programs())
def test_canonicalize_random_programs_match_mlir(text: str):
    assert _loom_canonicalized(text) == _jaxlib_canonicalized(text)


def test_materialize_constant_and_patterns_are_registered():
    from loom.ir.opdef import lookup_dialect
    d = lookup_dialect("arith")
    module = lir.parse("func.func @f() {\n  return\n}")
    block = module.body.first_op.regions[0].blocks[0]
    builder = lir.Builder(lir.InsertionPoint.before(block.first_op))
    value = lir.IntegerAttr(I[32], 7)
    op = d.materialize_constant(builder, value, I[32], lir.UNKNOWN_LOC)
    assert op.name == "arith.constant" and op.parent is block and op.result.type is I[32]
    assert d.materialize_constant(builder, value, I[64], lir.UNKNOWN_LOC) is None  # type mismatch
    assert d.materialize_constant(builder, lir.StringAttr("x"), I[32], lir.UNKNOWN_LOC) is None
    assert all(p.root == "arith.addi" for p in arith.AddIOp.canonicalization_patterns())


# Verifier ------------------------------------------------------------------------------------

VERIFIER_CASES = {
    "return_type": ("func.func @f(%a: i32) -> f32 {\n  return %a : i32\n}",
                    "type of return operand 0 ('i32') doesn't match function result type ('f32') in function @f"),
    "return_count": ("func.func @f(%a: i32) -> (i32, i32) {\n  return %a : i32\n}",
                     "has 1 operands, but enclosing function (@f) returns 2"),
    "return_outside_func": ('"func.return"() : () -> ()', "expects parent op 'func.func'"),
    "return_in_nested_region": ('func.func @f() {\n  "test.region"() ({\n    "func.return"() : () -> ()\n'
                                '  }) : () -> ()\n  return\n}', "expects parent op 'func.func'"),
    "call_operand_types": ("func.func private @g(i32) -> i32\nfunc.func @f(%x: f32) -> i32 {\n"
                           "  %0 = call @g(%x) : (f32) -> i32\n  return %0 : i32\n}",
                           "operand type mismatch: expected operand type 'i32', but provided 'f32' for operand "
                           "number 0"),
    "call_operand_count": ("func.func private @g(i32) -> i32\nfunc.func @f(%x: i32) -> i32 {\n"
                           "  %0 = call @g(%x, %x) : (i32, i32) -> i32\n  return %0 : i32\n}",
                           "incorrect number of operands for callee"),
    "call_result_types": ("func.func private @g(i32) -> i32\nfunc.func @f(%x: i32) -> f32 {\n"
                          "  %0 = call @g(%x) : (i32) -> f32\n  return %0 : f32\n}", "result type mismatch at index 0"),
    "call_result_count": ("func.func private @g(i32) -> i32\nfunc.func @f(%x: i32) {\n  call @g(%x) : (i32) -> ()\n"
                          "  return\n}", "incorrect number of results for callee"),
    "entry_block_args": ('"func.func"() <{function_type = (i32) -> (), sym_name = "f"}> ({\n^bb0(%a: f32):\n'
                         '  "func.return"() : () -> ()\n}) : () -> ()',
                         "type of entry block argument #0('f32') must match the type of the corresponding argument in "
                         "function signature('i32')"),
    "arg_attrs_length": ('"func.func"() <{arg_attrs = [{}, {}], function_type = (i32) -> (), sym_name = "f"}> ({\n'
                         '^bb0(%a: i32):\n  "func.return"() : () -> ()\n}) : () -> ()',
                         "expects argument attribute array to have the same number of elements as the number of "
                         "function arguments, got 2, but expected 1"),
    "addi_mixed_types": ('func.func @f(%a: i32, %b: i64) {\n  %0 = "arith.addi"(%a, %b) : (i32, i64) -> i32\n'
                         '  return\n}', "requires the same type for all operands and results"),
    "addi_on_floats": ('func.func @f(%a: f32) {\n  %0 = "arith.addi"(%a, %a) : (f32, f32) -> f32\n  return\n}',
                       "operand #0 must be signless-non-zero-bitwidth-integer-like, but got 'f32'"),
    "select_condition": ('func.func @f(%c: i32, %a: i32) {\n  %0 = "arith.select"(%c, %a, %a) : (i32, i32, i32) -> i32'
                         '\n  return\n}', "operand #0 must be bool-like, but got 'i32'"),
    "extsi_narrowing": ("func.func @f(%a: i32) {\n  %0 = arith.extsi %a : i32 to i16\n  return\n}",
                        "operand type 'i32' and result type 'i16' are cast incompatible"),
    "bitcast_width": ("func.func @f(%a: i32) {\n  %0 = arith.bitcast %a : i32 to f64\n  return\n}",
                      "operand type 'i32' and result type 'f64' are cast incompatible"),
    "index_cast_without_index": ("func.func @f(%a: i32) {\n  %0 = arith.index_cast %a : i32 to i64\n  return\n}",
                                 "operand type 'i32' and result type 'i64' are cast incompatible"),
    "constant_type": ('func.func @f() {\n  %0 = "arith.constant"() {value = 1 : i32} : () -> i64\n  return\n}',
                      "failed to verify that all of {value, result} have same type"),
    "constant_unsigned": ('func.func @f() {\n  %0 = "arith.constant"() {value = 1 : ui32} : () -> ui32\n  return\n}',
                          "integer return type must be signless"),
}


@pytest.mark.parametrize("name", sorted(VERIFIER_CASES))
def test_verifier_errors(name: str):
    text, message = VERIFIER_CASES[name]
    with pytest.raises(lir.VerifyError) as info:
        lir.parse(text, allow_unregistered=True)
    assert info.value.message == message
    jax_mlir = pytest.importorskip("jax._src.interpreters.mlir")
    from jax._src.lib.mlir import ir
    ctx = jax_mlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx, pytest.raises(ir.MLIRError) as mlir_error:
        ir.Module.parse(text)
    assert message in str(mlir_error.value)


def test_valid_programs_verify():
    module = lir.parse("""func.func private @g(i32) -> i32
func.func @f(%x: i32) -> (i32, i1) {
  %0 = call @g(%x) : (i32) -> i32
  %c = arith.constant 3 : i32
  %1 = arith.cmpi slt, %0, %c : i32
  return %0, %1 : i32, i1
}""")
    module.verify()
    # a call whose callee is not (yet) in a symbol table is not checked
    lone = func.CallOp.build("nowhere", [], [I[32]])
    lone.verify()


# Helper APIs -------------------------------------------------------------------------------

def test_flag_attributes_normalise_like_mlir():
    assert str(lir.parse("func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a {overflowFlags = "
                         "#arith.overflow<nuw, nsw>} : i32\n  return %0 : i32\n}")).count("overflow<nsw, nuw>") == 1
    assert str(arith.fastmath_flags(["afn", "nnan"])) == "#arith.fastmath<nnan,afn>"
    assert str(arith.fastmath_flags(["fast"])) == "#arith.fastmath<fast>"
    assert arith.flag_names(arith.fastmath_flags(["fast"])) == frozenset(arith.FASTMATH_FLAGS)
    assert arith.overflow_flags() is arith.OVERFLOW_NONE
    with pytest.raises(ValueError):
        arith.parse_attribute("#arith.overflow<wrap>")


def test_default_properties_are_always_present():
    block = lir.Block([I[32], lir.f32])
    x, f = block.args
    assert arith.AddIOp.build(x, x).properties == {"overflowFlags": arith.OVERFLOW_NONE}
    assert arith.AddFOp.build(f, f).properties == {"fastmath": arith.FASTMATH_NONE}
    assert arith.ExtFOp.build(f, lir.f64).properties == {}  # optional, not default-valued


@pytest.mark.parametrize("value, name", [
    (lir.IntegerAttr(I[32], 42), "c42_i32"), (lir.IntegerAttr(I[64], -1), "c-1_i64"),
    (lir.IntegerAttr(lir.index, 0), "c0"), (lir.BoolAttr(True), "true"), (lir.BoolAttr(False), "false"),
    (lir.FloatAttr.get(1.0, lir.f32), "cst"),
    (lir.DenseElementsAttr.get(np.int32(1), lir.VectorType((2,), I[32])), "cst"),
])
def test_constant_result_names(value: lir.Attribute, name: str):
    assert arith.ConstantOp.build(value).asm_result_name() == name


def test_builders_make_valid_ops():
    f = func.FuncOp.build("f", lir.FunctionType((I[32], I[32]), (I[1],)))
    module = lir.parse("module {\n}")
    module.body.append(f)
    block = f.entry_block
    x, y = block.args
    ops = [arith.ConstantOp.build(lir.IntegerAttr(I[32], 1))]
    ops.append(arith.AddIOp.build(x, ops[0].result, overflowFlags=arith.overflow_flags(["nsw"])))
    ops.append(arith.CmpIOp.build("ult", ops[1].result, y))
    ops.append(func.ReturnOp.build([ops[2].result]))
    for op in ops:
        block.append(op)
    module.verify()
    assert lir.print(module) == """module {
  func.func @f(%arg0: i32, %arg1: i32) -> i1 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 overflow<nsw> : i32
    %1 = arith.cmpi ult, %0, %arg1 : i32
    return %1 : i1
  }
}
"""


def test_call_to_unknown_function_is_rejected_like_mlir():
    mlir = pytest.importorskip("jax._src.interpreters.mlir")
    from jax._src.lib.mlir import ir
    text = "func.func @f() {\n  call @nope() : () -> ()\n  return\n}"
    with mlir.make_ir_context(), pytest.raises(ir.MLIRError) as oracle:
        ir.Module.parse(text)
    with pytest.raises(lir.VerifyError) as info:
        lir.parse(text)
    assert info.value.message == "'nope' does not reference a valid function"
    ours = str(info.value).splitlines()[0].replace(": error: ", ": ")
    assert f"error: {ours}" in str(oracle.value).replace('"-"', "-")
