"""Passes and the pass manager: pipeline text, options, nesting, instrumentation, the verifier
after each pass, and the passes themselves (canonicalize, cse, dce, symbol-dce, inline).

Oracles: MLIR itself through jaxlib (its pass pipeline parser, its passes and its IR dumps,
compared byte for byte with loom's generic print), the jaxlib-generated corpus in
tests/corpus/canonicalize, and hand-derived expectations where jaxlib has no equivalent (dce, and
inlining, which jaxlib's context cannot do because it lacks func's inliner extension). The
hand-derived expected IR is in FileCheck tests (input, pipeline and expected output in one file):
tests/filecheck/transforms/dce.mlir, inline.mlir (nested inlining, call-site locations,
op-pipelines), symbol-dce.mlir (the symbols kept) and symbol-dce-errors.mlir.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.paths import CORPUS as CORPUS_ROOT

import loom.ir as lir
from loom.dialects import arith, func  # noqa: F401  (registers the dialects)
from loom.rewrite import (
    OpPassManager,
    Option,
    OptionError,
    Pass,
    PassError,
    PassInstrumentation,
    PassManager,
    PassManagerError,
    PassVerifyError,
    PipelineParseError,
    lookup_pass,
    register_pass,
    registered_passes,
)
from loom.transforms import CanonicalizerPass, CSEPass, InlinerPass

os.environ.setdefault("JAX_PLATFORMS", "cpu")

CORPUS = CORPUS_ROOT / "canonicalize"
_OF = "<{overflowFlags = #arith.overflow<none>}>"


def parse(text: str) -> lir.Operation:
    return lir.parse(text, allow_unregistered=True)


def generic(op: lir.Operation) -> str:
    return lir.print(op, generic=True)


def run(text: str, pipeline: str, **kw) -> str:
    m = parse(text)
    PassManager.parse(pipeline, **kw).run(m)
    return generic(m)


_JAX_CTX = None


def _jax():
    global _JAX_CTX
    jax_mlir = pytest.importorskip("jax._src.interpreters.mlir", reason="jaxlib is the oracle for MLIR's passes")
    from jax._src.lib.mlir import ir as jir
    from jax._src.lib.mlir import passmanager
    if _JAX_CTX is None:
        _JAX_CTX = jax_mlir.make_ir_context()
        _JAX_CTX.allow_unregistered_dialects = True
    return jir, passmanager, _JAX_CTX


def upstream(text: str, pipeline: str) -> str:
    """MLIR's result for `pipeline` on `text`, generic form."""
    jir, passmanager, ctx = _jax()
    with ctx:
        m = jir.Module.parse(text)
        passmanager.PassManager.parse(pipeline).run(m.operation)
        return m.operation.get_asm(print_generic_op_form=True)


def upstream_pipeline_text(pipeline: str) -> str:
    _, passmanager, ctx = _jax()
    with ctx:
        return str(passmanager.PassManager.parse(pipeline))


# Pipeline text ------------------------------------------------------------------------------

def test_pipeline_nesting_and_printing() -> None:
    pm = PassManager.parse("builtin.module(func.func(canonicalize,cse),symbol-dce)")
    assert pm.anchor == "builtin.module"
    nested, sdce = pm.items
    assert isinstance(nested, OpPassManager) and nested.anchor == "func.func"
    assert [type(p) for p in nested.items] == [CanonicalizerPass, CSEPass]
    assert sdce.name == "symbol-dce"
    bare = PassManager.parse(" canonicalize , cse ")
    assert bare.anchor == "builtin.module" and [p.name for p in bare.items] == ["canonicalize", "cse"]
    assert PassManager.parse("func.func(cse)").anchor == "func.func"
    assert str(PassManager.parse("builtin.module()")) == "builtin.module()"


@pytest.mark.parametrize("pipeline", [
    "builtin.module(cse)",
    "builtin.module(func.func(cse),symbol-dce)",
    "builtin.module( cse , any(cse) )",
    "builtin.module(inline)",
    "builtin.module(inline{max-iterations=2 default-pipeline=cse})",
    "builtin.module(inline{default-pipeline=canonicalize{max-iterations=2},cse})",
])
def test_pipeline_text_matches_mlir(pipeline: str) -> None:
    assert str(PassManager.parse(pipeline)) == upstream_pipeline_text(pipeline)


def test_pass_options() -> None:
    pm = PassManager.parse("canonicalize{max-iterations=3 region-simplify=false top-down=0 "
                           "disable-patterns=a,b},canonicalize{top-down}")
    p, q = pm.items
    assert (p.max_iterations, p.region_simplify, p.top_down, p.disable_patterns) == (3, "disabled", False, ["a", "b"])
    assert q.top_down is True and q.max_iterations == 10
    assert p.pipeline_text().startswith("canonicalize{cse-between-iterations=false disable-patterns={a,b}")
    assert CanonicalizerPass(max_iterations=2, region_simplify="aggressive").options["max-iterations"] == 2
    assert InlinerPass(default_pipeline="cse").default_pipeline == "cse"
    with pytest.raises(OptionError, match="pass 'cse' has no option 'bogus'"):
        CSEPass(bogus=1)
    with pytest.raises(OptionError, match="invalid value 'x' for int option 'max-iterations'"):
        CanonicalizerPass(max_iterations="x")
    with pytest.raises(OptionError, match="expects an int"):
        CanonicalizerPass(max_iterations=1.5)


@register_pass
class OptionsPass(Pass):
    """A pass declaring one option of each kind."""

    name = "test-options"
    count = Option(int, 1, "an int")
    ratio = Option(float, 0.5, "a float")
    label = Option(str, "x", "a string")
    sizes = Option(list, [], "a list of ints", element=int)
    mode = Option(str, "fast", "an enumeration", choices=("fast", "slow"))
    flag = Option(bool, False, "a flag")

    def run(self, op: lir.Operation) -> None:
        pass


def test_declared_options() -> None:
    p = PassManager.parse("test-options{count=3 ratio=0.25 label='a b' sizes=1,2,3 mode=slow flag}").items[0]
    assert (p.count, p.ratio, p.label, p.sizes, p.mode, p.flag) == (3, 0.25, "a b", [1, 2, 3], "slow", True)
    assert p.pipeline_text() == "test-options{count=3 flag=true label={a b} mode=slow ratio=0.25 sizes={1,2,3}}"
    again = PassManager.parse(p.pipeline_text()).items[0]
    assert again.options == p.options
    assert OptionsPass().pipeline_text() == "test-options{count=1 flag=false label=x mode=fast ratio=0.5 }"
    with pytest.raises(PipelineParseError, match="invalid value 'x' for list option 'sizes'"):
        PassManager.parse("test-options{sizes=x}")
    with pytest.raises(PipelineParseError, match="invalid value 'maybe' for boolean option 'flag'"):
        PassManager.parse("test-options{flag=maybe}")


@pytest.mark.parametrize("pipeline, column, message", [
    ("cse,bogus", 5, "'bogus' does not refer to a registered pass or pass pipeline"),
    ("builtin.module(func.func(cse,nope{x=1}))", 30, "'nope' does not refer to a registered pass"),
    ("builtin.module(cse))", 20, "encountered extra closing ')' creating unbalanced parentheses"),
    ("builtin.module(cse", 15, "expected ')' to close the pipeline nested on 'builtin.module'"),
    ("cse,,canonicalize", 5, "expected a pass or op name, found ','"),
    ("canonicalize{max-iterations=3", 13, "missing '}'"),
    ("canonicalize{bogus=1}", 14, "pass 'canonicalize' has no option 'bogus'; its options are: "
                                  "cse-between-iterations, disable-patterns, enable-patterns, max-iterations, "
                                  "max-num-rewrites, region-simplify, test-convergence, top-down"),
    ("canonicalize{max-iterations=ten}", 14, "invalid value 'ten' for int option 'max-iterations'"),
    ("canonicalize{region-simplify=sometimes}", 14, "expected one of: disabled, normal, aggressive"),
    ("builtin.module(symbol-dce{x})", 27, "pass 'symbol-dce' has no option 'x'; its options are: none"),
])
def test_pipeline_errors_are_located(pipeline: str, column: int, message: str) -> None:
    with pytest.raises(PipelineParseError) as info:
        PassManager.parse(pipeline)
    e = info.value
    assert e.column == column and message in e.message
    text = str(e)
    assert text.startswith(f"pipeline:1:{column}: error: ")
    assert text.endswith(f"\n{pipeline}\n{' ' * (column - 1)}^")


def test_unknown_pass_is_also_unknown_to_mlir() -> None:
    _, passmanager, ctx = _jax()
    with ctx, pytest.raises(Exception, match="'bogus' does not refer to a registered pass or pass pipeline"):
        passmanager.PassManager.parse("builtin.module(cse,bogus)")


@register_pass
class FuncOnlyPass(Pass):
    """A pass restricted to func.func that counts the ops it saw."""

    name = "test-func-only"
    op_name = "func.func"
    seen: list = []

    def run(self, op: lir.Operation) -> None:
        FuncOnlyPass.seen.append(op.get_attr("sym_name").value)


def test_nest_add_and_anchors() -> None:
    pm = PassManager()
    nested = pm.nest("func.func")
    nested.add(FuncOnlyPass())
    pm.add(CSEPass())
    assert str(pm) == "builtin.module(func.func(test-func-only),cse)"
    with pytest.raises(PassManagerError, match="restricted to 'func.func'.*did you intend to nest"):
        pm.add(FuncOnlyPass())
    with pytest.raises(PipelineParseError, match="did you intend to nest"):
        PassManager.parse("builtin.module(test-func-only)")
    FuncOnlyPass.seen = []
    m = parse('"func.func"() <{function_type = () -> (), sym_name = "a"}> ({\n  "func.return"() : () -> ()\n'
              '}) : () -> ()\n"test.other"() : () -> ()\n"func.func"() <{function_type = () -> (), sym_name = "b"}> '
              '({\n  "func.return"() : () -> ()\n}) : () -> ()')
    pm.run(m)
    assert FuncOnlyPass.seen == ["a", "b"]
    with pytest.raises(PassManagerError, match="anchored on 'func.func'"):
        PassManager.parse("func.func(cse)").run(m)
    # `any` runs on every op directly nested in the module.
    any_pm = PassManager.parse("builtin.module(any(test-func-only))")
    with pytest.raises(PassManagerError, match="runs on 'func.func' ops, not on 'test.other'"):
        any_pm.run(m)


class Recorder(PassInstrumentation):
    def __init__(self) -> None:
        self.events: list[str] = []

    def run_before_pipeline(self, anchor, op) -> None:
        self.events.append(f"pipeline {anchor}")

    def run_before_pass(self, pass_, op) -> None:
        self.events.append(f"{pass_.name} on {op.get_attr('sym_name').value if op.get_attr('sym_name') else op.name}")


def test_adjacent_nested_pipelines_are_merged() -> None:
    m = parse('"func.func"() <{function_type = () -> (), sym_name = "a"}> ({\n  "func.return"() : () -> ()\n'
              '}) : () -> ()\n"func.func"() <{function_type = () -> (), sym_name = "b"}> '
              '({\n  "func.return"() : () -> ()\n}) : () -> ()')
    pm = PassManager.parse("builtin.module(func.func(cse),func.func(canonicalize),cse)")
    rec = pm.add_instrumentation(Recorder())
    pm.run(m)
    assert rec.events == ["pipeline func.func", "cse on a", "canonicalize on a", "pipeline func.func", "cse on b",
                          "canonicalize on b", "cse on builtin.module"]


def test_registry() -> None:
    names = registered_passes()
    assert {"canonicalize", "cse", "dce", "symbol-dce", "inline"} <= set(names)
    assert lookup_pass("cse") is CSEPass and lookup_pass("no-such-pass") is None
    with pytest.raises(ValueError, match="already registered"):
        @register_pass
        class Other(Pass):
            name = "cse"


# Instrumentation ----------------------------------------------------------------------------

TWO_FUNCS = f'''
"func.func"() <{{function_type = (i32) -> i32, sym_name = "f"}}> ({{
^bb0(%a: i32):
  %0 = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %1 = "arith.addi"(%0, %a) {_OF} : (i32, i32) -> i32
  %2 = "arith.addi"(%0, %a) {_OF} : (i32, i32) -> i32
  %3 = "arith.muli"(%1, %2) {_OF} : (i32, i32) -> i32
  "func.return"(%3) : (i32) -> ()
}}) : () -> ()
"func.func"() <{{function_type = (i32) -> i32, sym_name = "g", sym_visibility = "private"}}> ({{
^bb0(%a: i32):
  "func.return"(%a) : (i32) -> ()
}}) : () -> ()
"func.func"() <{{function_type = (i32) -> i32, sym_name = "h"}}> ({{
^bb0(%a: i32):
  "func.return"(%a) : (i32) -> ()
}}) : () -> ()
'''


def _upstream_ir_dumps(text: str, pipeline: str, **flags: bool) -> str:
    """MLIR's `--mlir-print-ir-after-all` output (written by C++ to stderr, so a subprocess)."""
    pytest.importorskip("jax._src.interpreters.mlir")
    options = ", ".join(f"{k}={v!r}" for k, v in {"print_after_all": True, "print_generic_op_form": True,
                                                    **flags}.items())
    script = textwrap.dedent(f"""
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir, passmanager
        ctx = mlir.make_ir_context()
        ctx.allow_unregistered_dialects = True
        ctx.enable_multithreading(False)
        with ctx:
            m = ir.Module.parse({text!r})
            pm = passmanager.PassManager.parse({pipeline!r})
            pm.enable_ir_printing({options})
            pm.run(m.operation)
    """)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_ir_printing_after_all_matches_mlir() -> None:
    pipeline = "builtin.module(func.func(cse),symbol-dce)"
    m = parse(TWO_FUNCS)
    pm = PassManager.parse(pipeline)
    out = io.StringIO()
    pm.enable_ir_printing(stream=out, generic=True)
    pm.run(m)
    expected = _upstream_ir_dumps(TWO_FUNCS, pipeline)
    assert out.getvalue() == expected
    assert out.getvalue().startswith("// -----// IR Dump After CSEPass: cse //----- //\n\"func.func\"()")
    m = parse(TWO_FUNCS)
    pm = PassManager.parse(pipeline)
    out = io.StringIO()
    pm.enable_ir_printing(stream=out, print_before_all=True, print_after_all=False, generic=True)
    pm.run(m)
    assert out.getvalue() == _upstream_ir_dumps(TWO_FUNCS, pipeline, print_before_all=True, print_after_all=False)


def test_ir_printing_selected_passes() -> None:
    m = parse(TWO_FUNCS)
    pm = PassManager.parse("builtin.module(func.func(cse,canonicalize),symbol-dce)")
    out = io.StringIO()
    pm.enable_ir_printing(stream=out, print_after=["canonicalize"], print_before=["SymbolDCEPass"], generic=True)
    pm.run(m)
    headers = re.findall(r"^// -----// IR Dump (\w+) (\w+): ([^{ ]+)", out.getvalue(), re.M)
    assert headers == [("After", "CanonicalizerPass", "canonicalize"), ("After", "CanonicalizerPass", "canonicalize"),
                       ("After", "CanonicalizerPass", "canonicalize"), ("Before", "SymbolDCEPass", "symbol-dce")]
    # Only after a change, and at module scope.
    m = parse(TWO_FUNCS)
    pm = PassManager.parse("builtin.module(func.func(cse))")
    out = io.StringIO()
    pm.enable_ir_printing(stream=out, print_after_change=True, print_module_scope=True, generic=True)
    pm.run(m)
    text = out.getvalue()
    assert text.count("IR Dump After") == 1
    assert text.startswith("// -----// IR Dump After CSEPass: cse ('func.func' operation: @f) //----- //\n"
                           '"builtin.module"() ({\n')
    assert text == _upstream_ir_dumps(TWO_FUNCS, "builtin.module(func.func(cse))", print_after_change=True,
                                      print_module_scope=True)


def test_timing_report() -> None:
    m = parse(TWO_FUNCS)
    pm = PassManager.parse("builtin.module(func.func(cse,canonicalize),symbol-dce)")
    out = io.StringIO()
    timing = pm.enable_timing(stream=out)
    pm.run(m)
    lines = out.getvalue().split("\n")
    assert lines[:3] == ["===" + "-" * 73 + "===", " " * 25 + "... Execution time report ...", "===" + "-" * 73 + "==="]
    total = float(re.fullmatch(r"  Total Execution Time: (\d+\.\d{4}) seconds", lines[3]).group(1))
    assert lines[4:6] == ["", "  ----Wall Time----  ----Name----"]
    rows = [re.fullmatch(r"  ( *\d+\.\d{4}) \(( *\d+\.\d)%\)  ( *)(.+)", line) for line in lines[6:-1]]
    assert all(rows) and lines[-1] == ""
    names = [(len(r.group(3)) // 2, r.group(4)) for r in rows]
    assert names == [(0, "'func.func' Pipeline"), (1, "CSEPass"), (1, "CanonicalizerPass"), (0, "SymbolDCEPass"),
                     (0, "Rest"), (0, "Total")]
    assert all(len(r.group(1)) == 8 and len(r.group(2)) == 5 for r in rows)
    assert rows[-1].group(2) == "100.0" and abs(float(rows[-1].group(1)) - total) < 1e-3
    top = sum(float(rows[i].group(1)) for i in (0, 3, 4))
    assert abs(top - total) < 5e-4  # top-level rows plus Rest add up to the total
    assert timing.last_report == out.getvalue()


# The verifier after each pass ---------------------------------------------------------------

@register_pass
class BreakIRPass(Pass):
    """Moves each function's terminator to the front of its block: the IR no longer verifies."""

    name = "test-break-ir"
    display_name = "TestBreakIRPass"

    def run(self, op: lir.Operation) -> None:
        for f in op.regions[0].blocks[0].ops:
            block = f.regions[0].blocks[0]
            if block.first_op is not block.last_op:
                block.last_op.move_before(block.first_op)


def test_verifier_after_each_pass_names_the_broken_pass() -> None:
    m = parse(TWO_FUNCS)
    pm = PassManager.parse("builtin.module(cse,test-break-ir,symbol-dce)")
    out = io.StringIO()
    pm.enable_ir_printing(stream=out, print_after_failure=True, generic=True)
    with pytest.raises(PassVerifyError) as info:
        pm.run(m)
    e = info.value
    assert isinstance(e, lir.VerifyError) and e.pass_name == "test-break-ir"
    assert "the IR failed to verify after pass 'test-break-ir' (TestBreakIRPass)" in str(e)
    assert "IR Dump After TestBreakIRPass Failed: test-break-ir" in out.getvalue()
    assert "SymbolDCEPass" not in out.getvalue()  # the pipeline stopped
    m = parse(TWO_FUNCS)
    PassManager.parse("builtin.module(test-break-ir)", verify=False).run(m)  # no verifier, no error


@register_pass
class BreakIRQuietlyPass(BreakIRPass):
    """Breaks the IR like test-break-ir but claims to have changed nothing."""

    name = "test-break-ir-quietly"
    display_name = "TestBreakIRQuietlyPass"

    def run(self, op: lir.Operation) -> None:
        super().run(op)
        self.mark_all_analyses_preserved()


def test_verifier_skipped_after_a_pass_that_preserved_everything() -> None:
    # As MLIR: no verification after a pass that marked all analyses preserved.
    m = parse(TWO_FUNCS)
    PassManager.parse("builtin.module(test-break-ir-quietly)").run(m)
    with pytest.raises(lir.VerifyError):
        m.verify()
    # cse, dce and canonicalize say so when they change nothing; then a second run is a no-op.
    m = parse(TWO_FUNCS)
    PassManager.parse("builtin.module(inline,symbol-dce,canonicalize,cse,dce)").run(m)
    for name in ("canonicalize", "cse", "dce", "symbol-dce", "inline"):
        pm = PassManager.parse(f"builtin.module({name})")
        p = pm.items[0]
        pm.run(m)
        assert p._preserved_all, name

# The passes against MLIR --------------------------------------------------------------------

def _corpus_cases():
    if not CORPUS.exists():
        return []
    pipelines = {"": "builtin.module(canonicalize,cse)", ".canonicalize": "builtin.module(canonicalize)",
                 ".cse": "builtin.module(cse)"}
    cases = []
    for source in sorted(CORPUS.glob("*.input.mlir")):
        base = source.name[:-len(".input.mlir")]
        for suffix, pipeline in pipelines.items():
            expected = CORPUS / f"{base}{suffix}.expected.mlir"
            if expected.exists():
                cases.append(pytest.param(source, expected, pipeline, id=f"{base}{suffix or '.canonicalize,cse'}"))
    return cases


@pytest.mark.parametrize("source, expected, pipeline", _corpus_cases())
def test_canonicalize_and_cse_corpus(source: Path, expected: Path, pipeline: str) -> None:
    assert run(source.read_text(), pipeline) == expected.read_text()


CSE_PROGRAM = f'''
"func.func"() <{{function_type = (i32, i32) -> (), sym_name = "f"}}> ({{
^bb0(%a: i32, %b: i32):
  %0 = "arith.addi"(%a, %b) {_OF} : (i32, i32) -> i32
  %1 = "arith.addi"(%b, %a) {_OF} : (i32, i32) -> i32
  %2 = "arith.subi"(%a, %b) {_OF} : (i32, i32) -> i32
  %3 = "arith.subi"(%b, %a) {_OF} : (i32, i32) -> i32
  %4 = "arith.subi"(%a, %b) {_OF} : (i32, i32) -> i32
  %5 = "arith.muli"(%0, %1) {_OF} : (i32, i32) -> i32
  %dead0 = "arith.muli"(%5, %5) {_OF} : (i32, i32) -> i32
  %dead1 = "arith.muli"(%dead0, %5) {_OF} : (i32, i32) -> i32
  %u = "test.foo"(%a) : (i32) -> i32
  %v = "test.foo"(%a) : (i32) -> i32
  %r = "test.region"() ({{
    %6 = "arith.subi"(%a, %b) {_OF} : (i32, i32) -> i32
    %7 = "arith.subi"(%6, %b) {_OF} : (i32, i32) -> i32
    %8 = "arith.subi"(%6, %b) {_OF} : (i32, i32) -> i32
    "test.sink"(%6, %7, %8) : (i32, i32, i32) -> ()
  }}) : () -> i32
  %c = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %d = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  "test.sink"(%0, %1, %2, %3, %4, %5, %u, %v, %c, %d) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> ()
  "func.return"() : () -> ()
}}) : () -> ()
"func.func"() <{{function_type = (i32, i32, i1) -> (), sym_name = "cfg"}}> ({{
^bb0(%a: i32, %b: i32, %p: i1):
  %0 = "arith.addi"(%a, %b) {_OF} : (i32, i32) -> i32
  "test.br"(%p)[^bb1, ^bb2] : (i1) -> ()
^bb1:
  %1 = "arith.addi"(%a, %b) {_OF} : (i32, i32) -> i32
  %2 = "arith.muli"(%a, %b) {_OF} : (i32, i32) -> i32
  "test.sink"(%1, %2) : (i32, i32) -> ()
  "test.br"()[^bb3] : () -> ()
^bb2:
  %3 = "arith.muli"(%a, %b) {_OF} : (i32, i32) -> i32
  "test.sink"(%3) : (i32) -> ()
  "test.br"()[^bb3] : () -> ()
^bb3:
  %4 = "arith.muli"(%a, %b) {_OF} : (i32, i32) -> i32
  %5 = "arith.addi"(%b, %a) {_OF} : (i32, i32) -> i32
  "test.sink"(%0, %4, %5) : (i32, i32, i32) -> ()
  "func.return"() : () -> ()
^bb4:
  %6 = "arith.muli"(%a, %b) {_OF} : (i32, i32) -> i32
  %7 = "arith.muli"(%a, %b) {_OF} : (i32, i32) -> i32
  "test.sink"(%6, %7) : (i32, i32) -> ()
  "test.br"()[^bb3] : () -> ()
}}) : () -> ()
'''


@pytest.mark.parametrize("pipeline", ["builtin.module(cse)", "builtin.module(func.func(cse))",
                                      "builtin.module(canonicalize)", "builtin.module(canonicalize{top-down=false})",
                                      "builtin.module(func.func(canonicalize{region-simplify=disabled}),cse)",
                                      "builtin.module(canonicalize{cse-between-iterations=true})"])
def test_passes_match_mlir(pipeline: str) -> None:
    """CSE: commutative operands as a multiset, dominance scopes across blocks, a fresh scope in
    unregistered regions, unregistered ops never merged, dead ops dropped when met (but not their
    operands that only die afterwards), unreachable blocks left alone."""
    assert run(CSE_PROGRAM, pipeline) == upstream(CSE_PROGRAM, pipeline)


LIMITS = """
func.func @f(%a: i32, %b: i32) -> (i32, i32, i32) {
  %x = "test.foo"() : () -> i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %s = arith.addi %c1, %c2 : i32
  %0 = arith.addi %a, %c1 : i32
  %1 = arith.addi %0, %c2 : i32
  %2 = arith.addi %b, %c1 : i32
  %3 = arith.addi %2, %c2 : i32
  %4 = arith.addi %3, %s : i32
  %c3 = arith.constant 3 : i32
  %5 = "test.bar"(%4, %c3, %x) : (i32, i32, i32) -> i32
  return %1, %4, %5 : i32, i32, i32
}
"""


@pytest.mark.parametrize("iterations", [1, 2, 10])
@pytest.mark.parametrize("rewrites", [1, 2, -1])
@pytest.mark.parametrize("top_down", ["true", "false"])
def test_canonicalize_limits_match_mlir(iterations: int, rewrites: int, top_down: str) -> None:
    """Stopping after `max-iterations` sweeps or `max-num-rewrites` pattern rewrites per sweep
    leaves the IR exactly where MLIR leaves it (folded constants not yet hoisted, ...)."""
    text = upstream(LIMITS, "builtin.module()")
    pipeline = (f"builtin.module(canonicalize{{max-iterations={iterations} max-num-rewrites={rewrites} "
                f"top-down={top_down}}})")
    assert run(text, pipeline) == upstream(text, pipeline)


def _fn(name: str, visibility: str = "", body: str = "") -> str:
    vis = f', sym_visibility = "{visibility}"' if visibility else ""
    return (f'"func.func"() <{{function_type = () -> (), sym_name = "{name}"{vis}}}> ({{\n{body}'
            f'  "func.return"() : () -> ()\n}}) : () -> ()\n')


SYMBOLS = (
    '"builtin.module"() <{sym_name = "inner"}> ({\n'
    + _fn("used_pub") + _fn("used_nested", "nested") + _fn("used_priv", "private")
    + _fn("unused_pub") + _fn("unused_nested", "nested") + _fn("unused_priv", "private")
    + '}) : () -> ()\n'
    + '"builtin.module"() <{sym_name = "inner_nested", sym_visibility = "nested"}> ({\n' + _fn("a") + '}) : () -> ()\n'
    + '"builtin.module"() <{sym_name = "inner_private", sym_visibility = "private"}> ({\n' + _fn("b", "private")
    + '}) : () -> ()\n'
    + _fn("top_nested", "nested") + _fn("top_nested_used", "nested") + _fn("pub")
    + _fn("caller", "private", '  "test.call"() {callee = @callee} : () -> ()\n')
    + _fn("callee", "private")
    + _fn("entry", "", '  "test.call"() {callee = [@reached, {k = @deep}]} : () -> ()\n')
    + _fn("reached", "private", '  "test.call"() {callee = @transitive} : () -> ()\n')
    + _fn("transitive", "private") + _fn("deep", "private")
    + _fn("cycle1", "private", '  "test.call"() {callee = @cycle2} : () -> ()\n')
    + _fn("cycle2", "private", '  "test.call"() {callee = @cycle1} : () -> ()\n')
    + '"test.user"() {ref = [@inner::@used_pub, @inner::@used_nested, @inner::@used_priv, @top_nested_used, '
      '{k = @inner_private::@b}]} : () -> ()\n'
)


def test_symbol_dce_matches_mlir() -> None:
    """Private and nested symbols die unless referenced, transitively from live ops; public ones
    stay; a nested reference cannot reach a private symbol; unreferenced symbol tables go whole."""
    result = run(SYMBOLS, "builtin.module(symbol-dce)")
    assert result == upstream(SYMBOLS, "builtin.module(symbol-dce)")
    # the symbols kept, by hand: tests/filecheck/transforms/symbol-dce.mlir


def test_canonicalize_test_convergence() -> None:
    text = _fn("f", "", '  %0 = "arith.constant"() <{value = 1 : i32}> : () -> i32\n'
                        '  %1 = "arith.addi"(%0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32\n'
                        '  "test.sink"(%1) : (i32) -> ()\n')
    pm = PassManager.parse("builtin.module(canonicalize{max-iterations=1 test-convergence=true})")
    with pytest.raises(PassError, match="did not converge within 1 iterations"):
        pm.run(parse(text))
    pm = PassManager.parse("builtin.module(canonicalize{max-iterations=2 test-convergence=true})")
    pm.run(parse(text))
    assert pm.items[0].converged


def test_symbol_dce_errors() -> None:
    unknown = _fn("p", "private") + '"test.op"() ({\n  "test.inner"() : () -> ()\n}) : () -> ()\n'
    with pytest.raises(PassError, match="potentially unknown symbol table"):
        run(unknown, "builtin.module(symbol-dce)")
    with pytest.raises(Exception, match="potentially unknown symbol table"):
        upstream(unknown, "builtin.module(symbol-dce)")
    with pytest.raises(PassError, match="does not define a symbol table"):
        run(_fn("f"), "builtin.module(func.func(symbol-dce))")


# inline -------------------------------------------------------------------------------------

def _func(name: str, body: str, args: str = "%a: i32", results: str = "i32", visibility: str = "private",
          extra: str = "") -> str:
    arg_types = ", ".join(a.split(": ")[1] for a in args.split(", ")) if args else ""
    vis = f', sym_visibility = "{visibility}"' if visibility else ""
    return (f'"func.func"() <{{function_type = ({arg_types}) -> {results}, sym_name = "{name}"{vis}{extra}}}> ({{\n'
            f"^bb0({args}):\n{body}\n}}) : () -> ()\n")


def test_inline_matches_mlir_on_the_inlined_program() -> None:
    """Calls are replaced by the callee body, the caller is canonicalized again, and a private
    callee left unused is erased. jaxlib cannot inline func.call (its context lacks func's
    inliner extension), so the oracle is MLIR's canonicalizer on the program inlined by hand."""
    callee = _func("callee", f'''  %0 = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %1 = "arith.addi"(%a, %0) {_OF} : (i32, i32) -> i32
  %2 = "arith.muli"(%1, %a) {_OF} : (i32, i32) -> i32
  "func.return"(%2) : (i32) -> ()''')
    caller = _func("caller", f'''  %0 = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %1 = "func.call"(%a) <{{callee = @callee}}> : (i32) -> i32
  %2 = "func.call"(%1) <{{callee = @callee}}> : (i32) -> i32
  %3 = "arith.addi"(%0, %2) {_OF} : (i32, i32) -> i32
  "func.return"(%3) : (i32) -> ()''', visibility="")
    unused = _func("unused", '  "func.return"(%a) : (i32) -> ()')
    by_hand = _func("caller", f'''  %0 = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %c = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %s = "arith.addi"(%a, %c) {_OF} : (i32, i32) -> i32
  %1 = "arith.muli"(%s, %a) {_OF} : (i32, i32) -> i32
  %d = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %t = "arith.addi"(%1, %d) {_OF} : (i32, i32) -> i32
  %2 = "arith.muli"(%t, %1) {_OF} : (i32, i32) -> i32
  %3 = "arith.addi"(%0, %2) {_OF} : (i32, i32) -> i32
  "func.return"(%3) : (i32) -> ()''', visibility="")
    m = parse(callee + unused + caller)
    pm = PassManager.parse("builtin.module(inline)")
    pm.run(m)
    assert pm.items[0].inlined_calls == 2
    assert generic(m) == upstream(by_hand, "builtin.module(canonicalize)")


def test_inline_when_mlir_would_not() -> None:
    """What loom does not inline (recursion, multi-block bodies, unregistered ops, no_inline,
    declarations) agrees with MLIR's inline pass, which also canonicalizes every function and
    erases unused private ones."""
    text = (
        _func("rec", '  %0 = "func.call"(%a) <{callee = @rec}> : (i32) -> i32\n  "func.return"(%0) : (i32) -> ()')
        + _func("even", '  %0 = "func.call"(%a) <{callee = @odd}> : (i32) -> i32\n  "func.return"(%0) : (i32) -> ()')
        + _func("odd", '  %0 = "func.call"(%a) <{callee = @even}> : (i32) -> i32\n  "func.return"(%0) : (i32) -> ()')
        + _func("opaque", '  %0 = "test.op"(%a) : (i32) -> i32\n  "func.return"(%0) : (i32) -> ()')
        + _func("noinline", '  "func.return"(%a) : (i32) -> ()', extra=", no_inline")
        + '"func.func"() <{function_type = (i32) -> i32, sym_name = "decl", sym_visibility = "private"}> ({\n'
          '}) : () -> ()\n'
        + _func("unused", '  "func.return"(%a) : (i32) -> ()')
        + _func("main", f'''  %c = "arith.constant"() <{{value = 2 : i32}}> : () -> i32
  %0 = "func.call"(%a) <{{callee = @rec}}> : (i32) -> i32
  %1 = "func.call"(%0) <{{callee = @even}}> : (i32) -> i32
  %2 = "func.call"(%1) <{{callee = @opaque}}> : (i32) -> i32
  %3 = "func.call"(%2) <{{callee = @noinline}}> : (i32) -> i32
  %4 = "func.call"(%3) <{{callee = @decl}}> : (i32) -> i32
  %5 = "arith.muli"(%c, %4) {_OF} : (i32, i32) -> i32
  "func.return"(%5) : (i32) -> ()''', visibility=""))
    m = parse(text)
    pm = PassManager.parse("builtin.module(inline)")
    pm.run(m)
    assert pm.items[0].inlined_calls == 0
    assert generic(m) == upstream(text, "builtin.module(inline)")


def test_inline_ir_dumps_match_mlir() -> None:
    """The inliner runs its optimization pipeline through the pass manager, so the IR dumps of
    each callable (callees first) come before the inliner's own, as in MLIR."""
    text = (_func("callee", '  %0 = "test.op"(%a) : (i32) -> i32\n  "func.return"(%0) : (i32) -> ()')
            + _func("unused", '  "func.return"(%a) : (i32) -> ()')
            + _func("caller", f'''  %c = "arith.constant"() <{{value = 2 : i32}}> : () -> i32
  %c2 = "arith.constant"() <{{value = 2 : i32}}> : () -> i32
  %0 = "func.call"(%a) <{{callee = @callee}}> : (i32) -> i32
  %1 = "arith.muli"(%c, %0) {_OF} : (i32, i32) -> i32
  %2 = "arith.muli"(%c2, %0) {_OF} : (i32, i32) -> i32
  %3 = "arith.addi"(%1, %2) {_OF} : (i32, i32) -> i32
  "func.return"(%3) : (i32) -> ()''', visibility=""))
    pipeline = "builtin.module(inline{default-pipeline=cse},symbol-dce)"
    m = parse(text)
    pm = PassManager.parse(pipeline)
    out = io.StringIO()
    pm.enable_ir_printing(stream=out, generic=True)
    pm.run(m)
    assert out.getvalue() == _upstream_ir_dumps(text, pipeline)
    assert out.getvalue().count("IR Dump After CSEPass: cse") == 3
