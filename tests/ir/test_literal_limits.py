"""Literals, dimensions and dialect names are checked as MLIR checks them (jaxlib's MLIR parser is
the oracle): hex floats out of range for their type, a minus on a hex float, hex integers out of
range, huge exponents and digit counts, dimensions past int64, and types or attributes of
unregistered dialects. MLIR's rejections are loom's located ParseErrors with MLIR's message; what
MLIR accepts prints as MLIR prints it; every case parses in bounded time."""

from __future__ import annotations

import re
import time

import pytest

import loom.ir as ir

mlir = pytest.importorskip("jaxlib.mlir.ir")

ATTRIBUTES = [
    # hex floats: the bits must fit the type; no leading minus
    "0x1E400E00 : f16", "0x7C00 : f16", "-0x7C00 : f16", "0x1E400E00 : f32", "0xFFFFFFFFF : bf16",
    "0x7FFF0000000000000000000000000001 : f128", "dense<0x1E400E00> : tensor<f16>",
    "dense<[0x1E400E00]> : tensor<1xf16>", "array<f16: 0x1E400E00>", "dense<[0x7C00, -0x7C00]> : tensor<2xf16>",
    "array<f16: -0x7C00>", "dense<(0x7C00, 0x1E400E00)> : tensor<complex<f16>>", "array<f32: 0x7F800000>",
    # hex integers: range-checked like decimal ones, the sign kept
    "dense<0xFF> : tensor<si8>", "dense<0x1FF> : tensor<i8>", "dense<0xFF> : tensor<i8>", "dense<-0x10> : tensor<i32>",
    "-0x10 : i32", "0xFF : si8",
    # decimal floats read through a double, as MLIR reads them: huge exponents are inf or 0, fast
    "1.0e999999999 : f128", "-1.0e999999999 : f128", "1.0e-999999999 : f128", "1.0e999999999 : f64",
    "1.0e400 : f128", "0.1 : f128", "0.1 : f80", "1.0e999999999 : f16", "dense<1.0e999999> : tensor<f32>",
    "dense<[1.0e99999999, -1.0e-99999999]> : tensor<2xf128>",
    # integers with many digits: out of range quickly, or exact when the type is wide enough
    "1" + "0" * 5000 + " : i64", "-1" + "0" * 5000 + " : i20000", "1" + "0" * 5000 + " : i16000",
    "dense<1" + "0" * 5000 + "> : tensor<i32>", "array<i64: 1" + "0" * 5000 + ">",
]

TYPES = [
    "tensor<100000000000000000000xf32>", "tensor<9223372036854775807xf32>", "tensor<9223372036854775808xf32>",
    "tensor<4611686018427387904x4xf32>", "tensor<" + "9" * 10000 + "xf32>", "vector<[99999999999999999999]xf32>",
    "!foo.type", "!foo.type<1, [2]>", "tensor<3x!foo.bar>",
]

UNREGISTERED_ATTRIBUTES = ["#foo.bar<1>", "#foo.bar", "[#foo.bar<\"x\">]"]


def _mlir(text: str, kind: str) -> tuple[bool, str]:
    """(True, MLIR's print) or (False, MLIR's error message) for an attribute or a type."""
    with mlir.Context():
        try:
            return True, str(mlir.Type.parse(text) if kind == "type" else mlir.Attribute.parse(text))
        except mlir.MLIRError as e:
            return False, re.sub(r"^.*?:\d+:\d+: ", "", str(e).split("\n")[1])


def _check(text: str, kind: str, module: str, allow_unregistered: bool) -> None:
    ok, want = _mlir(text, kind)
    start = time.perf_counter()
    if ok:
        printed = ir.print(ir.parse(module, allow_unregistered=allow_unregistered))
        assert want in printed, (printed, want)
        assert ir.print(ir.parse(printed, allow_unregistered=allow_unregistered)) == printed
    else:
        with pytest.raises(ir.ParseError) as e:
            ir.parse(module, allow_unregistered=allow_unregistered, filename="lit.mlir")
        assert e.value.filename == "lit.mlir" and e.value.line == 1 and e.value.column > 1, str(e.value)
        assert e.value.message == want, (e.value.message, want)
    assert time.perf_counter() - start < 1.0  # bounded work, whatever the literal


@pytest.mark.parametrize("text", ATTRIBUTES, ids=lambda t: t[:60])
def test_attribute_literal_as_mlir(text: str) -> None:
    _check(text, "attribute", f'"test.op"() {{a = {text}}} : () -> ()', allow_unregistered=True)


@pytest.mark.parametrize("text", TYPES, ids=lambda t: t[:60])
def test_type_as_mlir(text: str) -> None:
    _check(text, "type", f"func.func private @f() -> {text}", allow_unregistered=False)


@pytest.mark.parametrize("text", UNREGISTERED_ATTRIBUTES)
def test_unregistered_dialect_attribute_as_mlir(text: str) -> None:
    _check(text, "attribute", f"func.func private @f() attributes {{a = {text}}}", allow_unregistered=False)


@pytest.mark.parametrize("text", ["!foo.type", "!foo.type<1, [2]>"])
def test_unregistered_dialect_type_allowed_when_asked(text: str) -> None:
    module = f"func.func private @f() -> {text} attributes {{a = #foo.bar<1>}}"
    printed = ir.print(ir.parse(module, allow_unregistered=True))
    assert text in printed and "#foo.bar<1>" in printed


def test_huge_result_number_is_an_error_not_an_allocation() -> None:
    start = time.perf_counter()
    for text in ['"test.op"(%x#100000000000) : (i32) -> ()\n%x = "test.def"() : () -> i32',
                 '%x:99999999999999999999999 = "test.def"() : () -> i32']:
        with pytest.raises(ir.ParseError) as e:
            ir.parse(text, allow_unregistered=True)
        assert e.value.line in (1, 2)
    assert time.perf_counter() - start < 1.0
