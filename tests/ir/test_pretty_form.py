"""Custom (pretty) syntax of func, arith, StableHLO and CHLO, checked against MLIR itself: for each
program, loom's parse-then-print equals jaxlib's default printing byte for byte, loom's generic
printing equals jaxlib's generic printing, and loom's pretty output reads back to the same module.

StableHLO and CHLO are checked on tests/corpus/stablehlo (regenerated and compared here), which
covers every op loom declares, and on programs lowered by JAX (`as_text()`)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re

import pytest
from support.paths import CORPUS

import loom.ir as lir
from loom.dialects import chlo, stablehlo  # noqa: F401 - registers the dialects
from loom.ir.opdef import lookup_dialect

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax_mlir = pytest.importorskip("jax._src.interpreters.mlir", reason="jax is the oracle for MLIR's printing")
from jax._src.lib.mlir import ir  # noqa: E402

INT_BINARY = ["addi", "subi", "muli", "divui", "divsi", "ceildivui", "ceildivsi", "floordivsi", "remui", "remsi",
              "andi", "ori", "xori", "shli", "shrui", "shrsi", "maxsi", "maxui", "minsi", "minui"]
FLOAT_BINARY = ["addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf"]
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno",
        "true"]


def _binary_program(ops: list[str], t: str) -> str:
    body = "".join(f"  %r{i} = arith.{op} %a, %b : {t}\n" for i, op in enumerate(ops))
    results = ", ".join(f"%r{i}" for i in range(len(ops)))
    types = ", ".join([t] * len(ops))
    return f"func.func @f(%a: {t}, %b: {t}) -> ({types}) {{\n{body}  return {results} : {types}\n}}\n"


def _programs() -> dict[str, str]:
    p: dict[str, str] = {}
    for t in ("i32", "i1", "index", "vector<4xi16>", "tensor<2x?xi64>"):
        p[f"int_binary_{t}"] = _binary_program(INT_BINARY, t)
    for t in ("f32", "f16", "bf16", "f64", "vector<2xf32>", "tensor<*xf64>"):
        p[f"float_binary_{t}"] = _binary_program(FLOAT_BINARY, t)
    p["overflow_flags"] = """func.func @f(%a: i64, %b: i64) -> i64 {
  %0 = arith.addi %a, %b overflow<nsw> : i64
  %1 = arith.subi %0, %b overflow<nuw> : i64
  %2 = arith.muli %1, %1 overflow<nuw, nsw> : i64
  %3 = arith.shli %2, %b overflow<nsw,nuw> : i64
  %4 = arith.addi %3, %a overflow<none> : i64
  %5 = arith.trunci %4 overflow<nsw> : i64 to i32
  %6 = arith.extsi %5 : i32 to i64
  return %6 : i64
}
"""
    p["exact_flags"] = """func.func @f(%a: i32, %b: i32) -> (i32, i32, i32, i32) {
  %0 = arith.divsi %a, %b exact : i32
  %1 = arith.divui %a, %b exact : i32
  %2 = arith.shrsi %a, %b exact : i32
  %3 = arith.shrui %a, %b exact {tag = 1 : i32} : i32
  return %0, %1, %2, %3 : i32, i32, i32, i32
}
"""
    p["fastmath_flags"] = """func.func @f(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32, i1) {
  %0 = arith.addf %x, %y fastmath<fast> : f32
  %1 = arith.mulf %0, %y fastmath<nnan, ninf> : f32
  %2 = arith.subf %1, %x fastmath<reassoc,nnan,ninf,nsz,arcp,contract,afn> : f32
  %3 = arith.divf %2, %x fastmath<afn,contract> : f32
  %4 = arith.negf %3 fastmath<nsz> : f32
  %5 = arith.cmpf ogt, %4, %x fastmath<nnan> : f32
  %6 = arith.maximumf %x, %y fastmath<none> : f32
  return %0, %1, %2, %3, %6, %5 : f32, f32, f32, f32, f32, i1
}
"""
    p["cmpi_predicates"] = "func.func @f(%a: i32, %b: i32) -> i1 {\n" + "".join(
        f"  %{i} = arith.cmpi {q}, %a, %b : i32\n" for i, q in enumerate(CMPI)) + "  return %9 : i1\n}\n"
    p["cmpi_shaped"] = """func.func @f(%a: vector<4xindex>, %b: tensor<3x?xi8>) -> (vector<4xi1>, tensor<3x?xi1>) {
  %0 = arith.cmpi uge, %a, %a : vector<4xindex>
  %1 = arith.cmpi "ne", %b, %b : tensor<3x?xi8>
  return %0, %1 : vector<4xi1>, tensor<3x?xi1>
}
"""
    p["cmpf_predicates"] = "func.func @f(%a: f64, %b: f64) -> i1 {\n" + "".join(
        f"  %{i} = arith.cmpf {q}, %a, %b : f64\n" for i, q in enumerate(CMPF)) + "  return %15 : i1\n}\n"
    p["select"] = """func.func @f(%c: i1, %v: vector<4xi1>, %a: i32, %b: i32, %x: vector<4xf32>,
    %t: tensor<2xi1>, %u: tensor<2xf16>) -> (i32, vector<4xf32>, vector<4xf32>, tensor<2xf16>) {
  %0 = arith.select %c, %a, %b : i32
  %1 = arith.select %v, %x, %x : vector<4xi1>, vector<4xf32>
  %2 = arith.select %c, %x, %x {foo} : vector<4xf32>
  %3 = arith.select %t, %u, %u : tensor<2xi1>, tensor<2xf16>
  return %0, %1, %2, %3 : i32, vector<4xf32>, vector<4xf32>, tensor<2xf16>
}
"""
    p["integer_casts"] = """func.func @f(%a: i8, %b: i64, %i: index, %v: vector<2xi8>, %t: tensor<2xi32>) -> i64 {
  %0 = arith.extsi %a : i8 to i32
  %1 = arith.extui %a : i8 to i64
  %2 = arith.extui %a nneg : i8 to i16
  %3 = arith.trunci %b : i64 to i8
  %4 = arith.index_cast %i : index to i64
  %5 = arith.index_cast %0 : i32 to index
  %6 = arith.index_castui %i : index to i16
  %7 = arith.index_castui %2 : i16 to index
  %8 = arith.extsi %v : vector<2xi8> to vector<2xi64>
  %9 = arith.trunci %t : tensor<2xi32> to tensor<2xi1>
  %10 = arith.index_cast %t : tensor<2xi32> to tensor<2xindex>
  %11 = arith.bitcast %b : i64 to f64
  %12 = arith.bitcast %v : vector<2xi8> to vector<2xi8>
  return %1 : i64
}
"""
    p["float_casts"] = """func.func @f(%h: f16, %x: f32, %d: f64, %i: i32, %v: vector<3xf32>) -> f64 {
  %0 = arith.extf %h : f16 to f32
  %1 = arith.extf %x fastmath<contract> : f32 to f64
  %2 = arith.truncf %d : f64 to f32
  %3 = arith.truncf %d to_nearest_even : f64 to bf16
  %4 = arith.truncf %x downward fastmath<fast> : f32 to f16
  %5 = arith.truncf %d upward : f64 to f16
  %6 = arith.truncf %d toward_zero : f64 to f32
  %7 = arith.truncf %d to_nearest_away : f64 to f32
  %8 = arith.sitofp %i : i32 to f32
  %9 = arith.uitofp %i : i32 to f64
  %10 = arith.uitofp %i nneg : i32 to f16
  %11 = arith.fptosi %x : f32 to i64
  %12 = arith.fptoui %d : f64 to i8
  %13 = arith.bitcast %x : f32 to i32
  %14 = arith.extf %v : vector<3xf32> to vector<3xf64>
  %15 = arith.fptosi %v : vector<3xf32> to vector<3xi32>
  return %1 : f64
}
"""
    p["integer_constants"] = """func.func @f() -> (i32, i32, i64, index, index, i1, i1, i8, i16, i64) {
  %0 = arith.constant 42 : i32
  %1 = arith.constant -1 : i32
  %2 = arith.constant 9223372036854775807 : i64
  %3 = arith.constant 0 : index
  %4 = arith.constant -7 : index
  %5 = arith.constant true
  %6 = arith.constant false
  %7 = arith.constant 255 : i8
  %8 = arith.constant 0x7fff : i16
  %9 = arith.constant 42 : i64
  %10 = arith.constant 42 : i32
  %11 = arith.constant 42 : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i32, i32, i64, index, index, i1, i1, i8, i16, i64
}
"""
    p["float_and_dense_constants"] = """func.func @f() -> (f32, f64, f16, bf16, f32, f32, tensor<2x2xf32>,
    vector<4xi32>, tensor<3xi1>, tensor<0xf32>) {
  %0 = arith.constant 1.0 : f32
  %1 = arith.constant 0.1 : f64
  %2 = arith.constant 0x7C00 : f16
  %3 = arith.constant -0.0 : bf16
  %4 = arith.constant 0x7FC00000 : f32
  %5 = arith.constant 3.14159274 : f32
  %6 = arith.constant dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>
  %7 = arith.constant dense<7> : vector<4xi32>
  %8 = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %9 = arith.constant dense<> : tensor<0xf32>
  %10 = arith.constant {attr = "x"} 5 : i32
  %11 = arith.constant dense<true> : vector<2xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : f32, f64, f16, bf16, f32, f32, tensor<2x2xf32>,
    vector<4xi32>, tensor<3xi1>, tensor<0xf32>
}
"""
    p["func_declarations"] = """func.func private @decl(i32 {a.b = 1 : i32}, f32) -> (i32 {r.x})
func.func nested @d2() -> ((i32) -> i32)
func.func private @d3(tensor<?xf32>, !foo.bar) attributes {llvm.emit_c_interface}
func.func private @d4() -> (i32, f32)
func.func private @d5(i1) -> (i1 {a.x})
func.func private @"quoted name"()
"""
    p["func_attributes"] = """func.func @g(%a: i32 {foo.bar}, %b: f32 {}) -> (i32 {res.a = "r"},
    f32) attributes {no_inline, x = 1} {
  return {tag} %a, %b : i32, f32
}
"""
    p["func_empty"] = """func.func @empty() {
  return
}
func.func @f(%arg0: i32) -> i32 {
  return %arg0 : i32
}
"""
    p["calls"] = """func.func private @callee(i32, f32) -> (i32, f32)
func.func private @sink(i32)
func.func @caller(%a: i32, %b: f32) -> i32 {
  %0:2 = call @callee(%a, %b) : (i32, f32) -> (i32, f32)
  %1:2 = func.call @callee(%0#0, %0#1) {no_inline, zz = 2} : (i32, f32) -> (i32, f32)
  call @sink(%1#0) {arg_attrs = [{a}], res_attrs = []} : (i32) -> ()
  %2:2 = call @callee(%1#0, %b) {arg_attrs = [{x}, {}]} : (i32, f32) -> (i32, f32)
  return %2#0 : i32
}
"""
    p["sibling_numbering"] = """func.func @a(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %x, %c1 : i32
  %c1_0 = arith.constant 1 : i32
  %1 = arith.addi %0, %c1_0 : i32
  return %1 : i32
}
func.func @b(%x: i32, %y: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %0 = arith.muli %x, %c1 : i32
  return %0 : i32
}
"""
    p["named_module"] = """module @m attributes {foo.bar = 3 : i32} {
  func.func @f(%x: f32) -> f32 {
    %0 = arith.negf %x : f32
    return %0 : f32
  }
}
"""
    p["nested_modules"] = """module {
  module @inner {
    func.func @f() -> i1 {
      %t = arith.constant true
      return %t : i1
    }
  }
  func.func @g() -> index {
    %c = arith.constant 3 : index
    return %c : index
  }
}
"""
    p["multiple_blocks"] = """func.func @f(%c: i1, %x: i32) -> i32 {
  "test.br"(%x)[^bb1] : (i32) -> ()
^bb1(%y: i32):
  %0 = arith.addi %y, %y : i32
  "test.br"(%0)[^bb2] : (i32) -> ()
^bb2(%z: i32):
  return %z : i32
}
"""
    p["unregistered_in_body"] = """func.func @f(%x: i32) -> i32 {
  %0 = "test.op"(%x) {a = 1 : i64} : (i32) -> i32
  %1 = arith.addi %0, %0 : i32
  "test.region"() ({
    %2 = arith.constant 5 : i32
    "test.use"(%2, %1) : (i32, i32) -> ()
  }) : () -> ()
  return %1 : i32
}
"""
    p["generic_input"] = """"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "g"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.addi"(%arg0, %arg0) : (i32, i32) -> i32
    %1 = "arith.constant"() {value = 1.0 : f32} : () -> f32
    %2 = "arith.cmpf"(%1, %1) {predicate = 3 : i64} : (f32, f32) -> i1
    "func.return"(%0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
"""
    p["properties_in_attr_dict"] = """func.func @f(%a: i32, %x: f32) -> (i32, f32) {
  %0 = arith.addi %a, %a {overflowFlags = #arith.overflow<nuw>} : i32
  %1 = arith.addf %x, %x {fastmath = #arith.fastmath<nnan>} : f32
  return %0, %1 : i32, f32
}
"""
    p["long_chain"] = "func.func @f(%x: i64) -> i64 {\n" + "".join(
        f"  %{i} = arith.{['addi', 'muli', 'xori', 'subi'][i % 4]} %{i - 1 if i else 'x'}, %x : i64\n"
        for i in range(40)) + "  return %39 : i64\n}\n"
    p["bool_logic"] = """func.func @f(%a: i1, %b: i1) -> i1 {
  %t = arith.constant true
  %0 = arith.andi %a, %b : i1
  %1 = arith.ori %0, %a : i1
  %2 = arith.xori %1, %t : i1
  %3 = arith.select %2, %a, %b : i1
  %4 = arith.extui %3 : i1 to i32
  %5 = arith.cmpi ne, %4, %4 : i32
  return %5 : i1
}
"""
    p["constant_name_conflicts"] = """func.func @f(%x: index) -> index {
  %a = arith.constant 0 : index
  %b = arith.constant 0 : index
  %c = arith.constant 1.5 : f32
  %d = arith.constant 2.5 : f32
  %e = arith.constant 0 : i32
  %g = arith.constant 0 : i32
  %h = arith.constant true
  %i = arith.constant true
  %0 = arith.addi %x, %a : index
  %1 = arith.muli %0, %b : index
  return %1 : index
}
"""
    p["index_arithmetic"] = """func.func @f(%i: index, %j: index) -> (index, i1, index) {
  %c4 = arith.constant 4 : index
  %0 = arith.muli %i, %c4 : index
  %1 = arith.addi %0, %j : index
  %2 = arith.remsi %1, %c4 : index
  %3 = arith.ceildivsi %2, %c4 : index
  %4 = arith.cmpi slt, %3, %j : index
  %5 = arith.select %4, %i, %j : index
  return %5, %4, %1 : index, i1, index
}
"""
    p["mixed_widths"] = """func.func @f(%a: i1, %b: i7, %c: i128, %d: i64) -> (i7, i128, i1) {
  %0 = arith.addi %b, %b : i7
  %1 = arith.muli %c, %c : i128
  %2 = arith.extsi %d : i64 to i128
  %3 = arith.trunci %c : i128 to i7
  %4 = arith.xori %a, %a : i1
  %c5 = arith.constant 5 : i7
  %big = arith.constant 170141183460469231731687303715884105727 : i128
  return %0, %1, %4 : i7, i128, i1
}
"""
    p["dense_shapes"] = """func.func @f() -> (tensor<2x3xi32>, tensor<f32>, vector<2x2xf64>, tensor<1xi8>,
    tensor<2xf16>) {
  %0 = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %1 = arith.constant dense<2.5> : tensor<f32>
  %2 = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : vector<2x2xf64>
  %3 = arith.constant dense<-3> : tensor<1xi8>
  %4 = arith.constant dense<[0x7C00, 1.0]> : tensor<2xf16>
  %5 = arith.addi %0, %0 : tensor<2x3xi32>
  return %0, %1, %2, %3, %4 : tensor<2x3xi32>, tensor<f32>, vector<2x2xf64>, tensor<1xi8>, tensor<2xf16>
}
"""
    p["scalable_and_dynamic"] = """func.func @f(%v: vector<[4]xf32>,
    %t: tensor<?x?xi32>) -> (vector<[4]xf32>, tensor<?x?xi1>) {
  %0 = arith.mulf %v, %v : vector<[4]xf32>
  %1 = arith.cmpi sgt, %t, %t : tensor<?x?xi32>
  %2 = arith.sitofp %t : tensor<?x?xi32> to tensor<?x?xf32>
  return %0, %1 : vector<[4]xf32>, tensor<?x?xi1>
}
"""
    p["recursive_calls"] = """func.func @fact(%n: i64) -> i64 {
  %c1 = arith.constant 1 : i64
  %m = arith.subi %n, %c1 : i64
  %r = call @fact(%m) : (i64) -> i64
  %p = arith.muli %n, %r : i64
  return %p : i64
}
func.func @main() -> i64 {
  %c5 = arith.constant 5 : i64
  %r = call @fact(%c5) : (i64) -> i64
  return %r : i64
}
"""
    return p


PROGRAMS = _programs()


def _jaxlib(text: str) -> tuple[str, str]:
    ctx = jax_mlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        module = ir.Module.parse(text)
        return module.operation.get_asm(), module.operation.get_asm(print_generic_op_form=True)


def test_enough_programs():
    assert len(PROGRAMS) >= 40


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pretty_and_generic_match_mlir(name: str):
    text = PROGRAMS[name]
    pretty, generic = _jaxlib(text)
    module = lir.parse(text, allow_unregistered=True)
    assert lir.print(module) == pretty
    assert lir.print(module, generic=True) == generic
    # loom's own pretty output is a fixed point, and MLIR's pretty output reads the same.
    again = lir.parse(pretty, allow_unregistered=True)
    assert lir.print(again) == pretty
    assert lir.print(again, generic=True) == generic


@pytest.mark.parametrize("name", ["calls", "func_attributes", "integer_casts", "sibling_numbering"])
def test_debuginfo_matches_mlir(name: str):
    text = PROGRAMS[name]
    ctx = jax_mlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        module = ir.Module.parse(text)
        want_pretty = module.operation.get_asm(enable_debug_info=True)
        want_generic = module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True)
    ours = lir.parse(text, allow_unregistered=True)
    assert lir.print(ours, debuginfo=True) == want_pretty
    assert lir.print(ours, generic=True, debuginfo=True) == want_generic


def test_corpus_pretty_files():
    """The generated corpus (tests/corpus/pretty), committed with the tests: both prints match MLIR's."""
    folder = CORPUS / "pretty"
    files = sorted(p for p in folder.glob("*.mlir") if not p.name.endswith(".generic.mlir"))
    assert files, f"the pretty corpus is missing from {folder}"
    for path in files:
        text = path.read_text()
        module = lir.parse(text)
        assert lir.print(module) == text, path.name
        assert lir.print(module, generic=True) == path.with_name(path.stem + ".generic.mlir").read_text(), path.name


@pytest.mark.parametrize("text, message", [
    ("func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a overflow<bogus> : i32\n  return %0 : i32\n}",
     "bogus"),
    ("func.func @f(%a: i32) -> i1 {\n  %0 = arith.cmpi lt, %a, %a : i32\n  return %0 : i1\n}", "predicate"),
    ("func.func @f(%a: f32) -> f32 {\n  %0 = arith.extf %a : f32 f64\n  return %0 : f32\n}", "to"),
    ("func.func @f(i32, %a: i32)", "SSA"),
    ("func.func @f(%a: f8E9Z)", "unknown type 'f8E9Z'"),
    ("func.func @f() attributes {a = array<tensor<2xi32>: 1>}", "expected integer or float type"),
    ("func.func @f() attributes {a = dense_resource<blob> : f32}", "expected a shaped type"),
])
def test_malformed_custom_syntax_is_rejected(text: str, message: str):
    with pytest.raises(ir.MLIRError):
        _jaxlib(text)
    with pytest.raises(lir.ParseError, match=message):
        lir.parse(text)


# StableHLO and CHLO -----------------------------------------------------------------------------

STABLEHLO_CORPUS = CORPUS / "stablehlo"
STABLEHLO_FILES = sorted(p for p in STABLEHLO_CORPUS.glob("*.mlir") if not p.name.endswith(".generic.mlir"))
# Ops whose types need the quant dialect, which jaxlib's MLIR bindings do not register, and ops newer
# than jaxlib's StableHLO (collective_reduce): jaxlib can neither parse nor print them, so there is
# no oracle for their custom form.
NO_ORACLE = {"stablehlo.uniform_quantize", "stablehlo.uniform_dequantize", "stablehlo.collective_reduce"}


def test_stablehlo_corpus_covers_every_op():
    text = "".join(p.with_name(p.stem + ".generic.mlir").read_text() for p in STABLEHLO_FILES)
    seen = set(re.findall(r'"((?:stablehlo|chlo)\.[\w.-]+)"', text))
    declared = [n for d in ("stablehlo", "chlo") for n in lookup_dialect(d).ops]
    missing = sorted(n for n in declared if n not in seen and n not in NO_ORACLE)
    assert not missing, f"ops with no case in tests/corpus/stablehlo: {missing}"
    assert len(STABLEHLO_FILES) >= 190


@pytest.mark.parametrize("path", STABLEHLO_FILES, ids=lambda p: p.stem)
def test_stablehlo_pretty_form_matches_mlir(path: pathlib.Path):
    pretty = path.read_text()
    generic = path.with_name(path.stem + ".generic.mlir").read_text()
    module = lir.parse(generic)
    assert lir.print(module) == pretty
    assert lir.print(module, generic=True) == generic
    again = lir.parse(pretty)
    assert lir.print(again, generic=True) == generic
    assert lir.print(again) == pretty


@pytest.mark.parametrize("path", STABLEHLO_FILES, ids=lambda p: p.stem)
def test_stablehlo_debuginfo_matches_mlir(path: pathlib.Path):
    """The locations of ops parsed from the pretty form, and the aliases of the locations printed
    (MLIR gives none to what a custom form leaves out, such as a compact reduce's body)."""
    text = path.read_text()
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        want_pretty = module.operation.get_asm(enable_debug_info=True)
        want_generic = module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True)
    ours = lir.parse(text)
    assert lir.print(ours, debuginfo=True) == want_pretty
    assert lir.print(ours, generic=True, debuginfo=True) == want_generic


def test_stablehlo_corpus_is_what_jaxlib_prints():
    """Regenerating the corpus with jaxlib gives the committed files."""
    script = STABLEHLO_CORPUS.parent / "generate_stablehlo.py"
    spec = importlib.util.spec_from_file_location("generate_stablehlo", script)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    files = generator.render()
    assert sorted(files) == sorted(p.name for p in STABLEHLO_CORPUS.glob("*.mlir"))
    for name, text in files.items():
        assert (STABLEHLO_CORPUS / name).read_text() == text, name


def _jax_cases() -> dict[str, tuple]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    f32 = jnp.ones((3, 4), jnp.float32)
    i32 = jnp.arange(4, dtype=jnp.int32)
    img = jnp.ones((1, 5, 5, 2), jnp.float32)
    kernel = jnp.ones((3, 3, 2, 4), jnp.float32)
    return {
        "elementwise": (lambda x: jnp.tanh(jnp.exp(x) - jnp.log1p(jnp.abs(x))) * jnp.sqrt(x) / 2, f32),
        "erf_lgamma_compare_select": (lambda x: jnp.where(x > 0, jax.scipy.special.erf(x), lax.lgamma(x)), f32),
        "shape_ops": (lambda x: jnp.concatenate([jnp.pad(x[1:, ::2], ((1, 0), (0, 2))).T.reshape(4, 3),
                                                 jnp.broadcast_to(x[0, :3], (2, 3))]), f32),
        "dot_general": (lambda x: jnp.einsum("ij,kj->ik", x, x) @ x, f32),
        "convolution": (lambda x, k: lax.conv_general_dilated(x, k, (2, 1), "SAME",
                                                              dimension_numbers=("NHWC", "HWIO", "NHWC")), img,
                        kernel),
        "reductions": (lambda x: (jnp.sum(x, 0), jnp.max(x), jnp.argmax(x, 1)), f32),
        "reduce_window_cumulative": (lambda x: (jnp.cumsum(x, 1), lax.cummax(x, 0),
                                                lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID")), f32),
        "sort_top_k": (lambda x: (jnp.sort(x, 1), jnp.argsort(x[0]), lax.top_k(x, 2)), f32),
        "gather_scatter": (lambda x, i: (x[i % 3], x.at[i % 3, 0].add(1.0)), f32, i32),
        "control_flow": (lambda x, i: (lax.fori_loop(0, 3, lambda _, c: c * 2, x),
                                       lax.cond(x[0, 0] > 0, jnp.sin, jnp.cos, x),
                                       lax.switch(i[0], [jnp.sin, jnp.cos, jnp.tan], x)), f32, i32),
        "iota_constant_convert": (lambda i: (jnp.arange(6).reshape(2, 3), i.astype(jnp.float16),
                                             lax.bitcast_convert_type(i, jnp.float32), jnp.array([1.5, -2.0])), i32),
        "random": (lambda: jax.random.normal(jax.random.key(0), (3,)),),
        "rng_bit_generator": (lambda k: lax.rng_bit_generator(k, (2, 3))[1], jnp.zeros((4,), jnp.uint32)),
        "custom_call_linalg": (lambda x: jnp.linalg.cholesky(x @ x.T + jnp.eye(3)), f32),
        "dynamic_slice_update": (lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i[0], 1), (2, 2)),
                                                                       (1, i[1])), f32, i32),
        "complex_fft_clamp": (lambda x: (jnp.fft.fft(x).real, jnp.clip(x, 0.0, 1.0), lax.complex(x, x)), f32),
        "reduce_precision_rem_pow": (lambda x: (lax.reduce_precision(x, 5, 10), x % 2.0, x ** 3, x ** x), f32),
    }


def _jax_texts() -> list[tuple[str, str, str, str]]:
    """(name, pretty text, its generic form, pretty text with locations) per case."""
    import jax
    out = []
    for name, (fn, *args) in _jax_cases().items():
        lowered = jax.jit(fn).lower(*args)
        pretty = lowered.as_text()
        with jax_mlir.make_ir_context():
            generic = ir.Module.parse(pretty).operation.get_asm(print_generic_op_form=True)
        out.append((name, pretty, generic, lowered.as_text(debug_info=True)))
    return out


def test_jax_lowerings_print_as_mlir():
    """Programs JAX lowers, as `jax.jit(f).lower(...).as_text()` prints them (with and without
    locations): loom reads the text, prints it back byte for byte, and prints the generic form as
    jaxlib does."""
    cases = _jax_texts()
    seen: set[str] = set()
    for name, pretty, generic, with_locations in cases:
        module = lir.parse(pretty)
        assert lir.print(module) == pretty, name
        assert lir.print(module, generic=True) == generic, name
        assert lir.print(lir.parse(generic)) == pretty, name
        assert lir.print(lir.parse(with_locations), debuginfo=True) == with_locations, name
        seen.update(re.findall(r'"((?:stablehlo|chlo)\.[\w.-]+)"', generic))
    for op in ("stablehlo.dot_general", "stablehlo.convolution", "stablehlo.reduce_window", "stablehlo.sort",
               "stablehlo.scatter", "stablehlo.gather", "stablehlo.while", "stablehlo.case", "stablehlo.custom_call",
               "stablehlo.rng_bit_generator", "stablehlo.dynamic_update_slice", "chlo.top_k", "chlo.erf",
               "stablehlo.bitcast_convert", "stablehlo.fft", "stablehlo.reduce_precision", "stablehlo.iota"):
        assert op in seen, op


@pytest.mark.parametrize("text, message", [
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.add %a %a : tensor<4xf32>\n  return\n}", "','"),
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.compare GTE, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> "
     "tensor<4xi1>\n  return\n}", "comparison_direction"),
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.reduce_precision %a, format = e5 : tensor<4xf32>\n"
     "  return\n}", "e#m#"),
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.select %a, %a, %a : tensor<4xf32>\n  return\n}",
     "two types"),
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.slice %a [0:2:1 : (tensor<4xf32>) -> tensor<2xf32>\n"
     "  return\n}", "']'"),
    # Inside a StableHLO op's regions `call` needs its dialect: only func.func's body omits it.
    ("func.func @g(%a: tensor<i32>) -> tensor<i32> {\n  return %a : tensor<i32>\n}\n"
     "func.func @f(%a: tensor<i32>) -> tensor<i32> {\n  %0 = stablehlo.while(%it = %a) : tensor<i32>\n  cond {\n"
     "    %c = stablehlo.compare LT, %it, %it : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
     "    stablehlo.return %c : tensor<i1>\n  } do {\n    %x = call @g(%it) : (tensor<i32>) -> tensor<i32>\n"
     "    stablehlo.return %x : tensor<i32>\n  }\n  return %0 : tensor<i32>\n}", "custom op 'call' is unknown"),
])
def test_malformed_stablehlo_syntax_is_rejected(text: str, message: str):
    with pytest.raises(ir.MLIRError):
        _jaxlib(text)
    with pytest.raises(lir.ParseError, match=message):
        lir.parse(text)


@pytest.mark.parametrize("generic", [False, True])
def test_loom_opt_prints_stablehlo_as_mlir_opt(generic: bool, capsys: pytest.CaptureFixture):
    """loom-opt prints StableHLO in the pretty form by default and in the generic form with
    --mlir-print-op-generic, as mlir-opt does."""
    from loom.tools import loom_opt
    path = next(p for p in STABLEHLO_FILES if "argmax" in p.name)
    want = path.with_name(path.stem + ".generic.mlir") if generic else path
    rc = loom_opt.main([str(path.with_name(path.stem + ".generic.mlir"))] + ["--mlir-print-op-generic"] * generic)
    assert rc == 0
    assert capsys.readouterr().out == want.read_text()


def test_assembly_format_errors_name_the_op():
    from loom.ir.opdef import OpBase, operand
    with pytest.raises(ValueError, match="'nope' is not a field of test_format.bad"):
        type("BadFormatOp", (OpBase,), {"name": "test_format.bad", "x": operand(), "__module__": __name__,
                                        "assembly_format": "$nope attr-dict"})
    with pytest.raises(ValueError, match="bad assembly format of test_format.bad at '! attr-dict'"):
        type("BadFormatOp", (OpBase,), {"name": "test_format.bad", "x": operand(), "__module__": __name__,
                                        "assembly_format": "$x ! attr-dict"})
    for text, message in (("($x", "ends early"), ("($x)?", "without an anchor")):
        with pytest.raises(ValueError, match=message):
            type("BadFormatOp", (OpBase,), {"name": "test_format.bad", "x": operand(), "__module__": __name__,
                                            "assembly_format": text})
    assert lookup_dialect("test_format") is None
