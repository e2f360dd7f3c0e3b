"""Property tests: random IR built with the Builder prints, parses and prints identically (and
jaxlib prints loom's text the same way); mutated valid text raises only loom's own errors, each
located by line and column."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loom.ir as lir
from loom.dialects.builtin import ModuleOp
from loom.ir import (
    ArrayAttr,
    Block,
    Builder,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    FloatAttr,
    FloatType,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    LoomError,
    ParseError,
    RankedTensorType,
    Region,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
)

INT_TYPES = [IntegerType(w, s) for w in (1, 8, 16, 32, 64) for s in ("", "s", "u")]
FLOAT_TYPES = [FloatType(n) for n in ("f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2")]

scalar_types = st.sampled_from(INT_TYPES + FLOAT_TYPES + [lir.index])


@st.composite
def types(draw, depth=0):
    t = draw(scalar_types)
    kind = draw(st.integers(0, 4 if depth < 2 else 0))
    if kind == 1:
        shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
        return RankedTensorType(shape, t)
    if kind == 2:
        return lir.ComplexType(draw(st.sampled_from(FLOAT_TYPES[:4])))
    if kind == 3:
        return lir.TupleType(tuple(draw(st.lists(types(depth + 1), max_size=3))))
    if kind == 4:
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
        return lir.VectorType(shape, t)
    return t


@st.composite
def integer_attrs(draw):
    t = draw(st.sampled_from(INT_TYPES + [lir.index]))
    width = t.width
    v = draw(st.integers(-(1 << (width - 1)) if width > 1 else 0, (1 << width) - 1))
    if getattr(t, "is_unsigned", False):
        v = abs(v)
    return IntegerAttr.get(v, t)


@st.composite
def float_attrs(draw):
    t = draw(st.sampled_from(FLOAT_TYPES))
    v = draw(st.floats(allow_nan=True, allow_infinity=True, width=64))
    return FloatAttr.get(v, t)


@st.composite
def dense_attrs(draw):
    et = draw(st.sampled_from([lir.i32, lir.i1, lir.f32, lir.i8, lir.f64]))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    t = RankedTensorType(shape, et)
    n = t.num_elements
    if et is lir.i1:
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif isinstance(et, IntegerType):
        vals = draw(st.lists(st.integers(-128, 127), min_size=n, max_size=n))
    else:
        vals = draw(st.lists(st.floats(width=32, allow_nan=False), min_size=n, max_size=n))
    import numpy as np
    return DenseElementsAttr.get(np.array(vals).reshape(shape), t)


text_chars = st.text(alphabet=string.printable + "é€\x01", max_size=8)

leaf_attrs = st.one_of(
    integer_attrs(), float_attrs(), text_chars.map(lambda s: StringAttr(s)), types().map(TypeAttr),
    st.just(lir.UNIT), dense_attrs(),
    st.tuples(st.text(string.ascii_letters, min_size=1, max_size=5), st.text(string.ascii_letters, max_size=4))
    .map(lambda p: SymbolRefAttr(p[0], (p[1],) if p[1] else ())),
    st.lists(st.integers(-100, 100), max_size=4).map(lambda v: DenseArrayAttr.get(lir.i32, v)),
)

attrs = st.recursive(
    leaf_attrs,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(lambda xs: ArrayAttr(tuple(xs))),
        st.dictionaries(st.text(string.ascii_lowercase + " _", min_size=1, max_size=5), children, max_size=3)
        .map(DictionaryAttr.get),
    ),
    max_leaves=6,
)


@st.composite
def modules(draw):
    module = ModuleOp.build()
    b = Builder(InsertionPoint.at_end(module.body))
    values = []
    n = draw(st.integers(1, 8))
    for i in range(n):
        operands = draw(st.lists(st.sampled_from(values), max_size=3)) if values else []
        result_types = draw(st.lists(types(), max_size=2))
        attributes = draw(st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=4), attrs,
                                          max_size=3))
        n_regions = draw(st.integers(0, 1)) if i % 3 == 0 else 0
        regions = []
        for _ in range(n_regions):
            region = Region()
            block = region.add_block(Block(draw(st.lists(types(), max_size=2))))
            inner = Builder(InsertionPoint.at_end(block))
            inner_vals = list(block.args) + values
            for _ in range(draw(st.integers(0, 2))):
                ops_ = draw(st.lists(st.sampled_from(inner_vals), max_size=2)) if inner_vals else []
                op = inner.create("test.inner", ops_, draw(st.lists(types(), max_size=1)))
                inner_vals.extend(op.results)
            regions.append(region)
        op = b.create(f"test.op{i % 3}", operands, result_types, attributes=attributes, regions=regions)
        values.extend(op.results)
    return module


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_built_ir_prints_parses_prints_identically(module):
    text = lir.print(module, generic=True)
    again = lir.print(lir.parse(text, allow_unregistered=True), generic=True)
    assert again == text
    debug = lir.print(module, generic=True, debuginfo=True)
    assert lir.print(lir.parse(debug, allow_unregistered=True), generic=True, debuginfo=True) == debug


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_built_ir_prints_like_mlir(module):
    ir = pytest.importorskip("jaxlib.mlir.ir")
    text = lir.print(module, generic=True)
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        assert ir.Module.parse(text).operation.get_asm(print_generic_op_form=True) == text


SEED_TEXT = '''"builtin.module"() ({
  "t.f"() ({
  ^bb0(%arg0: i32, %arg1: tensor<2xf32>):
    %0 = "t.add"(%arg0, %arg0) {a = [1, 2.5 : f32, "s"], d = dense<[1.0, 2.0]> : tensor<2xf32>} : (i32, i32) -> i32
    %1:2 = "t.pair"(%0) <{p = array<i64: 1, 2>}> : (i32) -> (i32, i1)
    "t.br"(%1#0)[^bb1] : (i32) -> ()
  ^bb1(%2: i32):  // pred: ^bb0
    "t.ret"(%2, %arg1) : (i32, tensor<2xf32>) -> ()
  }) {sym_name = "f"} : () -> ()
}) : () -> ()
'''


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SEED_TEXT) - 1), st.integers(0, 3), st.sampled_from(list('%^"(){}[]<>:,=#@!x0-. \n')))
def test_mutated_text_raises_only_located_loom_errors(pos, kind, ch):
    if kind == 0:
        text = SEED_TEXT[:pos] + SEED_TEXT[pos + 1:]
    elif kind == 1:
        text = SEED_TEXT[:pos] + ch + SEED_TEXT[pos:]
    elif kind == 2:
        text = SEED_TEXT[:pos] + ch + SEED_TEXT[pos + 1:]
    else:
        text = SEED_TEXT[:pos]
    try:
        module = lir.parse(text, allow_unregistered=True)
    except ParseError as e:
        assert e.line >= 1 and e.column >= 1
        assert f":{e.line}:{e.column}: error:" in str(e)
        return
    except LoomError as e:
        assert "error:" in str(e)
        return
    # Accepted text must round-trip.
    out = lir.print(module, generic=True)
    assert lir.print(lir.parse(out, allow_unregistered=True), generic=True) == out


@pytest.mark.parametrize("kind", ["f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "f8E3M4", "tf32", "f80"])
def test_float_printing_matches_mlir_on_random_bit_patterns(kind):
    """Every bit pattern class (normals, subnormals, NaN, inf, integral values) prints as MLIR
    prints it: written as hex bits, printed back by jaxlib and by loom."""
    ir = pytest.importorskip("jaxlib.mlir.ir")
    import random
    rng = random.Random(kind)
    width = lir.FloatType(kind).width
    patterns = [rng.getrandbits(width) for _ in range(400)] + [0, 1, (1 << (width - 1))]
    if kind == "f80":  # x87 format: keep the explicit integer bit consistent with the exponent
        patterns = [p | (1 << 63) if (p >> 64) & 0x7FFF else p & ~(1 << 63) for p in patterns]
    text = '"t.a"() {' + ", ".join(f"v{i} = 0x{b:X} : {kind}" for i, b in enumerate(patterns)) + "} : () -> ()\n"
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        expected = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
    assert lir.print(lir.parse(text, allow_unregistered=True), generic=True) == expected
