"""Inputs that used to crash (an internal error, exit status 2, a raw Python exception) are errors
that say where: bytes that are not UTF-8, a bad regex in `expected-error-re` or in a FileCheck
pattern, a pass pipeline nested 2,000 deep, element types the compiled executor cannot hold."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import loom
import loom.ir as ir
from loom.backend.compiled import UnsupportedTypeError
from loom.rewrite import PassManager
from loom.rewrite.pipeline import MAX_PIPELINE_DEPTH, PipelineParseError
from loom.tools import filecheck, loom_opt

FUNC = "func.func @f() {\n  func.return\n}\n"


def opt(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = loom_opt.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_invalid_utf8_is_located_in_parse_and_loom_opt(tmp_path: Path) -> None:
    data = b"func.func @f() {\n  func.return // caf\xe9\n}\n"
    with pytest.raises(ir.ParseError) as e:
        ir.parse(data, filename="in.mlir")
    assert (e.value.filename, e.value.line, e.value.column) == ("in.mlir", 2, 21)
    assert e.value.message == "invalid UTF-8 in input (byte 0xE9)"
    assert ir.print(ir.parse(data.replace(b"\xe9", b"\xc3\xa9"))) == ir.print(ir.parse(FUNC))  # valid UTF-8 is fine
    path = tmp_path / "bad.mlir"
    path.write_bytes(data)
    status, out, err = opt(str(path))
    assert status == 1 and out == ""
    assert err.startswith(f"{path}:2:21: error: invalid UTF-8 in input (byte 0xE9)\n"), err


def test_bad_regex_in_expected_error_re_is_located(tmp_path: Path) -> None:
    path = tmp_path / "diag.mlir"
    path.write_text("func.func @f() {\n  func.return // expected-error-re {{a {{(}} b}}\n}\n")
    status, _, err = opt(str(path), "--verify-diagnostics")
    assert status == 1
    assert err.startswith(f"{path}:2:38: error: invalid regex: missing ), unterminated subpattern\n"), err


def test_bad_regex_in_filecheck_pattern_is_located(tmp_path: Path) -> None:
    path = tmp_path / "check.mlir"
    path.write_text("// RUN: loom-opt %s | FileCheck %s\n// CHECK: func.func {{(}}\n" + FUNC)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert filecheck.main([str(path)]) == 1
    assert f"{path}:2: invalid regex: missing ), unterminated subpattern" in err.getvalue(), err.getvalue()


@pytest.mark.parametrize("depth", [MAX_PIPELINE_DEPTH + 1, 2000])
def test_deep_pipeline_is_a_located_error(depth: int, tmp_path: Path) -> None:
    pipeline = "builtin.module(" + "any(" * depth + "cse" + ")" * (depth + 1)
    with pytest.raises(PipelineParseError) as e:
        PassManager.parse(pipeline)
    assert e.value.message == f"pipeline nested more than {MAX_PIPELINE_DEPTH} levels deep"
    assert pipeline[e.value.position] == "(" and pipeline[:e.value.position].count("(") == MAX_PIPELINE_DEPTH
    path = tmp_path / "f.mlir"
    path.write_text(FUNC)
    status, _, err = opt(str(path), f"--pass-pipeline={pipeline}")
    assert status == 1 and err.startswith(f"pipeline:1:{e.value.column}: error: pipeline nested"), err[:200]


def test_pipeline_as_deep_as_allowed_runs(tmp_path: Path) -> None:
    depth = MAX_PIPELINE_DEPTH - 2
    body = "  %c = arith.constant 1 : i32\n" + '"test.region"() ({\n' * depth + "}) : () -> ()\n" * depth
    path = tmp_path / "deep.mlir"
    path.write_text(f"func.func @f() {{\n{body}  func.return\n}}\n")
    pipeline = "builtin.module(func.func(" + "test.region(" * (depth - 1) + "cse" + ")" * (depth + 1)
    status, out, err = opt(str(path), "--allow-unregistered-dialect", f"--pass-pipeline={pipeline}")
    assert status == 0, err[:500]
    assert out.count('"test.region"') == depth


@pytest.mark.parametrize("element_type", ["f80", "f128", "tf32", "complex<i32>", "complex<f16>", "i128"])
def test_compile_names_the_op_and_the_element_type_it_cannot_run(element_type: str) -> None:
    t = f"tensor<2x{element_type}>"
    text = f"func.func @main(%a: {t}) -> {t} {{\n  %0 = stablehlo.add %a, %a : {t}\n  return %0 : {t}\n}}\n"
    with pytest.raises(UnsupportedTypeError) as e:
        loom.compile(ir.parse(text, filename="prog.mlir"))
    assert str(e.value) == (f"prog.mlir:1:1: error: 'func.func' op has element type '{element_type}', which the "
                            "compiled executor cannot run (no numpy dtype holds it)")
    calls = (f"func.func @main(%a: tensor<2xf32>) -> {t} {{\n"
             f"  %0 = func.call @inner(%a) : (tensor<2xf32>) -> {t}\n  return %0 : {t}\n}}\n"
             f"func.func private @inner(%a: tensor<2xf32>) -> {t} {{\n"
             f"  %0 = stablehlo.convert %a : (tensor<2xf32>) -> {t}\n  return %0 : {t}\n}}\n")
    with pytest.raises(UnsupportedTypeError, match=r"^p.mlir:2:8: error: 'func.call' op has element type"):
        loom.compile(ir.parse(calls, filename="p.mlir"))
