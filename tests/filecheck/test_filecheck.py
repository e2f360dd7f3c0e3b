"""FileCheck tests: every `tests/filecheck/**/*.mlir` file runs its `// RUN:` lines (loom-opt, then
FileCheck on its output), and the checker itself is tested on checks that must hold and checks
that must fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.tools.filecheck import CheckFileError, check_output, main, parse_checks, run_file, run_lines

HERE = Path(__file__).parent
FILES = sorted(HERE.rglob("*.mlir"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(HERE)) for p in FILES])
def test_file(path: Path) -> None:
    errors = run_file(str(path))
    assert not errors, "\n\n".join(errors)


def test_files_are_found() -> None:
    assert FILES, "no .mlir files under tests/filecheck"


# The checker ----------------------------------------------------------------------------------

OUTPUT = """\
func.func @f(%arg0: i32) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32
  %1 = arith.muli %0, %0 : i32
  return %1 : i32
}
func.func @g() {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  return
}
"""


def failures(checks: str, output: str = OUTPUT) -> list[str]:
    return check_output(parse_checks(checks), output)


@pytest.mark.parametrize("checks", [
    "CHECK: arith.addi\nCHECK: arith.muli",
    "CHECK: %0 = arith.addi\nCHECK-NEXT: %1 = arith.muli\nCHECK-NEXT: return %1",
    "CHECK: %0 = arith.addi\nCHECK-SAME: %arg0, %arg0\nCHECK-SAME: : i32",
    "CHECK: %[[X:.*]] = arith.addi\nCHECK: arith.muli %[[X]], %[[X]]",
    "CHECK: func.func @f(%[[A:[a-z0-9]+]]: i32)\nCHECK: arith.addi %[[A]], %[[A]]",
    "CHECK: arith.addi %[[A:arg[0-9]]], %[[A]]",
    "CHECK: arith.{{add|sub}}i\nCHECK-NOT: arith.subi\nCHECK: return",
    "CHECK-LABEL: @f\nCHECK: return %1\nCHECK-LABEL: @g\nCHECK: return",
    "CHECK-LABEL: @f\nCHECK-NOT: arith.constant\nCHECK-LABEL: @g",
    "CHECK-LABEL: @g\nCHECK-DAG: constant 2\nCHECK-DAG: constant 1\nCHECK: return",
    "CHECK:  %1   =   arith.muli",  # runs of spaces match any run of spaces
])
def test_checks_that_hold(checks: str) -> None:
    assert failures(checks) == []


@pytest.mark.parametrize("checks, message", [
    ("CHECK: arith.subi", "CHECK: expected string not found in input"),
    ("CHECK: arith.muli\nCHECK: arith.addi", "CHECK: expected string not found"),  # order matters
    ("CHECK: %0 = arith.addi\nCHECK-NEXT: return", "CHECK-NEXT: is not on the line after the previous match"),
    ("CHECK: arith.addi\nCHECK-SAME: arith.muli", "CHECK-SAME: is not on the same line"),
    ("CHECK: arith.addi\nCHECK-NOT: arith.muli\nCHECK: return", "CHECK-NOT: excluded string found in input"),
    ("CHECK-LABEL: @f\nCHECK: arith.constant\nCHECK-LABEL: @g", "CHECK: expected string not found"),  # in @f
    ("CHECK: %[[X:.*]] = arith.muli\nCHECK: arith.addi %[[X]]", "CHECK: expected string not found"),
    ("CHECK: arith.addi %[[A:arg[0-9]]], %[[A]], %[[A]]", "CHECK: expected string not found"),
    ("CHECK-DAG: constant 1\nCHECK-DAG: constant 1", "CHECK-DAG: expected string not found"),  # no overlap
    ("CHECK-LABEL: @h", "CHECK-LABEL: expected string not found"),
    ("CHECK: %1 = arith.muli\nCHECK-NOT: arith", "CHECK-NOT: excluded string found"),  # to the end
])
def test_checks_that_fail(checks: str, message: str) -> None:
    errors = failures(checks)
    assert len(errors) == 1 and message in errors[0], errors
    assert errors[0].startswith("<checks>:")


@pytest.mark.parametrize("checks, message", [
    ("no directives here", "no check strings found"),
    ("CHECK-NEXT: x", "without previous 'CHECK: line"),
    ("CHECK: x\nCHECK-NEXTT: y", "unknown directive 'CHECK-NEXTT'"),
    ("CHECK:", "found empty check string"),
    ("CHECK: x\nCHECK-NOT:   ", "found empty check string"),
])
def test_malformed_check_files(checks: str, message: str) -> None:
    with pytest.raises(CheckFileError, match=message):
        parse_checks(checks)


def test_undefined_variable() -> None:
    with pytest.raises(CheckFileError, match="use of undefined variable 'Y'"):
        failures("CHECK: [[Y]]")


def test_run_lines() -> None:
    text = "// RUN: loom-opt %s \\\n// RUN:   --split-input-file | FileCheck %s\n// RUN: loom-opt %s\nx"
    assert run_lines(text) == ["loom-opt %s  --split-input-file | FileCheck %s", "loom-opt %s"]


def test_run_file_reports_a_failing_check_and_a_failing_tool(tmp_path: Path) -> None:
    program = "func.func @f(%a: i32) -> i32 {\n  return %a : i32\n}\n"
    good = tmp_path / "good.mlir"
    good.write_text("// RUN: loom-opt %s | FileCheck %s\n// CHECK: return %arg0 : i32\n" + program)
    assert run_file(str(good)) == []
    bad = tmp_path / "bad.mlir"
    bad.write_text("// RUN: loom-opt %s | FileCheck %s\n// CHECK: return %arg1 : i32\n" + program)
    (error,) = run_file(str(bad))
    assert f"{bad}:2: error: CHECK: expected string not found in input" in error
    broken = tmp_path / "broken.mlir"
    broken.write_text("// RUN: loom-opt %s | FileCheck %s\n// CHECK: return\nfunc.func @f( {\n")
    (error,) = run_file(str(broken))
    assert "loom-opt exited with status 1" in error and f"{broken}:3:" in error
    expected_failure = tmp_path / "expected_failure.mlir"
    expected_failure.write_text("// RUN: not loom-opt %s 2>&1 | FileCheck %s\n// CHECK: error: \nfunc.func @f( {\n")
    assert run_file(str(expected_failure)) == []


def test_main_reports_each_failing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.mlir"
    good.write_text("// RUN: loom-opt %s | FileCheck %s\n// CHECK: func.func @f\nfunc.func @f() {\n  return\n}\n")
    no_run = tmp_path / "no_run.mlir"
    no_run.write_text("func.func @f() {\n  return\n}\n")
    assert main([str(good)]) == 0
    assert main([str(good), str(no_run), str(tmp_path / "missing.mlir")]) == 1
    err = capsys.readouterr().err
    assert f"{no_run}: no RUN lines" in err and "missing.mlir" in err
