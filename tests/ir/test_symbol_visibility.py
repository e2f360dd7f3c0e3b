"""A symbol's visibility is one of public / private / nested, checked by the verifier as MLIR
checks it (jaxlib's MLIR is the oracle), so that no verified op prints text that does not parse."""

from __future__ import annotations

import re

import pytest

import loom.ir as ir

jax_mlir = pytest.importorskip("jax._src.interpreters.mlir")
mlir = pytest.importorskip("jaxlib.mlir.ir")


def _mlir_error(text: str) -> str | None:
    with jax_mlir.make_ir_context():
        try:
            mlir.Module.parse(text)
            return None
        except mlir.MLIRError as e:
            return re.sub(r"^.*?:\d+:\d+: ", "", str(e).split("\n")[1]).replace("'func.func' op ", "")


@pytest.mark.parametrize("visibility", ['"bogus"', '""', '"Public"', '"private"', '"nested"', '"public"'])
def test_visibility_checked_as_mlir(visibility: str) -> None:
    text = (f'"func.func"() <{{function_type = () -> (), sym_name = "f", sym_visibility = {visibility}}}> ({{\n'
            '  "func.return"() : () -> ()\n}) : () -> ()')
    want = _mlir_error(text)
    if want is None:
        module = ir.parse(text)
        printed = ir.print(module)
        assert ir.print(ir.parse(printed)) == printed
    else:
        with pytest.raises(ir.VerifyError) as e:
            ir.parse(text)
        assert e.value.message == want
