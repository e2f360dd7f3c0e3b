"""`!quant.uniform`: parse, print as MLIR's quant dialect does, and the spec's constraints.

jaxlib's MLIR does not register the quant dialect (its parser refuses `!quant.uniform` unless
unregistered dialects are allowed, and then keeps the text as it is), so the printed form is
checked against the printer's rules as StableHLO's own tests show them (stablehlo/tests/transforms/
stablehlo_legalize_qdq_to_quantized_op.mlir: `34.0:16` prints `3.400000e+01:16`, `ui8` stays `ui8`,
`u8` stays `u8`); jaxlib checks that the printed text is well-formed MLIR."""

from __future__ import annotations

import pytest

import loom.ir
from loom.dialects.quant import QuantError, UniformQuantizedType, check_quantized_tensor, parse_type
from loom.ir.diagnostics import LoomError
from loom.ir.types import FloatType, RankedTensorType, f32


def printed(type_text: str) -> str:
    module = loom.ir.parse(f"func.func @f(%a: tensor<2x{type_text}>) {{\n  return\n}}")
    line = str(module).splitlines()[1]
    return line[line.index("tensor<2x") + len("tensor<2x"):line.rindex(">)")]


@pytest.mark.parametrize("text,expected", [
    ("!quant.uniform<i8:f32, 0.1:-3>", "!quant.uniform<i8:f32, 1.000000e-01:-3>"),
    ("!quant.uniform<i8:f32:1, {0.1:-3, 0.2:4}>", "!quant.uniform<i8:f32:1, {1.000000e-01:-3,2.000000e-01:4}>"),
    ("!quant.uniform<i8<-127:127>:f32, 1.0e-1>", "!quant.uniform<i8<-127:127>:f32, 1.000000e-01>"),
    ("!quant.uniform<i8<-128:127>:f32, 2.0:0>", "!quant.uniform<i8:f32, 2.000000e+00>"),
    ("!quant.uniform<ui8:f32, 34.0:16>", "!quant.uniform<ui8:f32, 3.400000e+01:16>"),
    ("!quant.uniform<u8:f32, 3.400000e+01:16>", "!quant.uniform<u8:f32, 3.400000e+01:16>"),
    ("!quant.uniform<i32:f64, 2.000000e+00:15>", "!quant.uniform<i32:f64, 2.000000e+00:15>"),
    ("!quant.uniform<i4:bf16:0, {1.0,2.5:-1}>", "!quant.uniform<i4:bf16:0, {1.000000e+00,2.500000e+00:-1}>"),
    ("!quant.uniform<i8:f32, 0.0039215482917486456:-128>", "!quant.uniform<i8:f32, 3.921548e-03:-128>"),
])
def test_prints_as_mlir_quant_dialect(text, expected, jax_ir):
    assert printed(text) == expected
    assert printed(expected) == expected  # the printed text is a fixed point
    ir, ctx = jax_ir
    with ctx:  # well-formed MLIR: jaxlib parses it (as an unregistered dialect's type) and keeps it
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(f"func.func @f(%a: tensor<2x{expected}>) {{\n  return\n}}")
        assert expected in str(module)


def test_fields_and_storage_type():
    t = parse_type("!quant.uniform<i8<-127:127>:f32:1, {0.1:-3, 0.2:4}>")
    assert isinstance(t, UniformQuantizedType)
    assert (t.storage, t.storage_min, t.storage_max, t.quantized_dimension) == ("i8", -127, 127, 1)
    assert t.scales == (0.1, 0.2) and t.zero_points == (-3, 4) and t.expressed_type is f32
    assert str(t.storage_type) == "i8" and t.is_per_axis
    assert str(parse_type("!quant.uniform<u8:f32, 1.0>").storage_type) == "ui8"
    # interned: equal parameters give the same object, whatever the spelling of the defaults
    assert parse_type("!quant.uniform<i8<-128:127>:f32, 0.5:0>") is parse_type("!quant.uniform<i8:f32, 0.5>")
    assert t.baseline() is UniformQuantizedType("i8", -127, 127, FloatType("f32"), 1, (1.0, 1.0), (0, 0))


@pytest.mark.parametrize("text,message,column", [
    ("!quant.uniform<i8:f32, -1.0>", "illegal scale", 50),
    ("!quant.uniform<i8:f32, 0.0>", "illegal scale", 50),
    ("!quant.uniform<i8:f32, 1.0:200>", "illegal zero point: 200", 54),
    ("!quant.uniform<i8<-10:10>:f32, 1.0:11>", "illegal zero point: 11", 62),
    ("!quant.uniform<i8:f32, {1.0, 2.0}>", "a per-tensor type has one scale", 34),
    ("!quant.uniform<f8:f32, 1.0>", "illegal storage type: 'f8'", 42),
    ("!quant.uniform<i8:i32, 1.0>", "illegal expressed type: 'i32'", 45),
    ("!quant.uniform<i8<5:3>:f32, 1.0>", "illegal storage bounds <5:3>", 45),
    ("!quant.uniform<i8<-129:127>:f32, 1.0>", "illegal storage bounds", 45),
    ("!quant.uniform<ui8<0:256>:f32, 1.0>", "illegal storage bounds", 46),
    ("!quant.uniform<i8:f32:0, 1.0>", "expected '{'", 52),
    ("!quant.uniform<i8:f32:-1, {1.0}>", "illegal quantization dimension", 49),
])
def test_the_spec_constraints_are_parse_errors_located_in_the_type(text, message, column):
    source = f"func.func @f(%a: tensor<2x{text}>) {{\n  return\n}}"
    with pytest.raises(LoomError, match=message) as info:
        loom.ir.parse(source)
    assert f"-:1:{column}:" in str(info.value)


def test_quant_types_other_than_uniform_stay_opaque():
    assert parse_type("!quant.any<i8:f32>") is None
    module = loom.ir.parse("func.func @f(%a: tensor<2x!quant.any<i8:f32>>) {\n  return\n}")
    assert "!quant.any<i8:f32>" in str(module)


def test_per_axis_dimension_must_fit_the_tensor():
    t = parse_type("!quant.uniform<i8:f32:1, {0.1:-3, 0.2:4}>")
    check_quantized_tensor(RankedTensorType((3, 2), t))
    with pytest.raises(QuantError, match="dimension 1 has size 3 but the type has 2 scales"):
        check_quantized_tensor(RankedTensorType((2, 3), t))
    with pytest.raises(QuantError, match="quantization dimension 1 is out of range"):
        check_quantized_tensor(RankedTensorType((2,), t))


def test_spec_example_program_round_trips():
    text = ('func.func @main(%arg0: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, {1.000000e-01:-30,'
            '5.000000e-01:-20}>> {\n'
            '  %0 = "stablehlo.uniform_quantize"(%arg0) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, '
            '{1.000000e-01:-30,5.000000e-01:-20}>>\n'
            '  return %0 : tensor<2x!quant.uniform<i8:f32:0, {1.000000e-01:-30,5.000000e-01:-20}>>\n}')
    module = loom.ir.parse(text)
    module.verify()
    assert str(module).replace("module {\n", "").strip().startswith(text.split("\n")[0])
    assert str(loom.ir.parse(str(module))) == str(module)
