"""Integer literals are range-checked as MLIR checks them (jaxlib's MLIR parser is the oracle):
out-of-range values are errors that say where, never silently wrapped; in-range ones print as
MLIR prints them; integer widths are capped at MLIR's limit."""

from __future__ import annotations

import pytest

import loom.ir as ir

mlir = pytest.importorskip("jaxlib.mlir.ir")

CASES = [
    # scalar attributes
    "-2147483649 : i32", "-2147483648 : i32", "2147483647 : i32", "4294967295 : i32", "4294967296 : i32",
    "-129 : i8", "-128 : i8", "255 : i8", "256 : i8", "127 : si8", "128 : si8", "-128 : si8", "255 : ui8",
    "256 : ui8", "-1 : ui8", "-1 : i1", "1 : i1", "2 : i1", "-0 : i32", "18446744073709551615 : i64",
    "18446744073709551616 : i64", "-9223372036854775808 : index", "-9223372036854775809 : index",
    # dense elements
    "dense<4294967296> : tensor<i32>", "dense<4294967295> : tensor<i32>", "dense<-2147483649> : tensor<i32>",
    "dense<-1> : tensor<ui8>", "dense<255> : tensor<ui8>", "dense<256> : tensor<ui8>", "dense<2> : tensor<i1>",
    "dense<-1> : tensor<i1>", "dense<[1, 300]> : tensor<2xi8>", "dense<[1, -128]> : tensor<2xi8>",
    "dense<255> : tensor<si8>", "dense<-128> : tensor<si8>",
    # dense arrays
    "array<i8: 300>", "array<i8: -129>", "array<i8: 255, -128>", "array<i32: 4294967296>", "array<i64: -1>",
    # widths
    "3 : i16777215", "3 : i16777216", "3 : i99999999999",
]


def _mlir(text: str) -> str | None:
    """jaxlib's print of the attribute, or None when MLIR rejects it."""
    with mlir.Context():
        try:
            return str(mlir.Attribute.parse(text))
        except Exception:  # MLIRError: the text is rejected
            return None


@pytest.mark.parametrize("text", CASES)
def test_integer_literal_checked_as_mlir(text: str) -> None:
    want = _mlir(text)
    module = f'"test.op"() {{a = {text}}} : () -> ()'
    if want is None:
        with pytest.raises(ir.ParseError) as e:
            ir.parse(module, allow_unregistered=True, filename="lit.mlir")
        message = str(e.value)
        assert message.startswith("lit.mlir:1:"), message
        assert "out of range" in message or "negative" in message or "bitwidth is limited" in message, message
    else:
        printed = ir.print(ir.parse(module, allow_unregistered=True))
        assert f"a = {want}" in printed, (printed, want)
