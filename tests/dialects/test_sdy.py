"""The sdy (Shardy) dialect against jaxlib: every program of tests/corpus/sharded (JAX's lowered
sharded programs and snippets) parses, verifies and prints back byte for byte in the pretty and
the generic form; every verifier error is located at the op, where jaxlib's own verifier rejects
the same program; malformed sdy text is located at file:line:col; what the builders make is what
jaxlib prints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support.paths import CORPUS, ROOT

import loom.ir as lir
from loom.dialects import sdy
from loom.dialects import stablehlo as shlo
from loom.dialects.builtin import ModuleOp
from loom.dialects.func import FuncOp
from loom.dialects.func import ReturnOp as FuncReturnOp
from loom.ir import Builder, FunctionType, InsertionPoint, ParseError, RankedTensorType, VerifyError
from loom.ir.printer import print_op
from loom.ir.types import f32

SHARDED = CORPUS / "sharded"
PRETTY = sorted(p for p in SHARDED.glob("*.mlir") if not p.name.endswith(".generic.mlir"))


# The sharded corpus ---------------------------------------------------------------------------

def test_corpus_covers_the_sharded_programs():
    names = [p.stem for p in PRETTY]
    assert len(names) >= 25
    text = "".join(p.read_text() for p in PRETTY)
    for op in ("sdy.mesh @", "sdy.sharding_constraint ", "sdy.reshard ", "sdy.manual_computation(", "sdy.return ",
               "sdy.sharding_group ",
               '"stablehlo.all_reduce"', '"stablehlo.all_gather"', '"stablehlo.reduce_scatter"',
               '"stablehlo.all_to_all"', '"stablehlo.collective_permute"', "stablehlo.partition_id"):
        assert op in text, op


@pytest.mark.parametrize("path", PRETTY, ids=lambda p: p.stem)
def test_sharded_program_round_trips_in_both_forms(path):
    pretty = path.read_text()
    generic = path.with_name(path.stem + ".generic.mlir").read_text()
    module = lir.parse(pretty)  # verifies
    sdy.verify_shardings(module)
    assert print_op(module) == pretty
    assert print_op(module, generic=True) == generic
    again = lir.parse(generic)
    assert print_op(again, generic=True) == generic
    assert print_op(again) == pretty


@pytest.mark.slow
def test_generator_writes_exactly_the_corpus():
    """The generator, run with 8 fake devices, reproduces the committed files."""
    pytest.importorskip("jax")
    script = ("import json, importlib.util, sys; spec = importlib.util.spec_from_file_location('g', sys.argv[1]); "
              "g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g); print(json.dumps(g.render()))")
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", script, str(CORPUS / "generate_sharded.py")], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=300, check=True)
    files = json.loads(out.stdout)
    assert sorted(files) == sorted(p.name for p in SHARDED.glob("*.mlir"))
    for name, text in files.items():
        assert (SHARDED / name).read_text() == text, name


# Verifier errors ------------------------------------------------------------------------------

HEADER = ('module {\n  sdy.mesh @mesh = <["x"=2, "y"=4, "z"=8]>\n  sdy.mesh @maximal = <[], device_ids=[0]>\n'
          '  sdy.mesh @other = <["x"=2]>\n')


def _constraint(sharding: str, t: str = "tensor<8x8xf32>") -> str:
    """The bad op is on line 6, column 10 (an op is located at its name)."""
    return (HEADER + f"  func.func @f(%a: {t}) -> {t} {{\n    %0 = sdy.sharding_constraint %a {sharding} : {t}\n"
            f"    return %0 : {t}\n  }}\n}}\n")


def _mesh(mesh: str) -> str:
    """The bad mesh is on line 2, column 3."""
    return f"module {{\n  sdy.mesh @bad = {mesh}\n}}\n"


def _manual(operands: str, ins: str, outs: str, axes: str, args: str, body: str, types: str) -> str:
    """A manual computation on line 6, column 10, over %a: tensor<8x8xf32> (and %s: tensor<6x8xf32>)."""
    return (HEADER + "  func.func @f(%a: tensor<8x8xf32>, %s: tensor<6x8xf32>) {\n"
            f"    %0 = sdy.manual_computation({operands}) in_shardings=[{ins}] out_shardings=[{outs}] "
            f"manual_axes={{{axes}}} ({args}) {{\n{body}\n    }} : {types}\n    return\n  }}\n}}\n")


X_IN = '<@mesh, [{"x"}, {}]>'
GOOD_BODY = "      sdy.return %b : tensor<4x8xf32>"
SIG = "(tensor<8x8xf32>) -> tensor<8x8xf32>"

# name -> (op, message, line:col, text). jaxlib's verifier rejects every one of these programs too.
BAD_PROGRAMS = {
    "unknown_mesh": ("sdy.sharding_constraint", "unknown mesh: @nomesh", "6:10", _constraint('<@nomesh, [{}, {}]>')),
    "rank": ("sdy.sharding_constraint", "sharding doesn't match tensor rank: 1 != 2", "6:10",
             _constraint('<@mesh, [{}]>')),
    "unknown_axis": ("sdy.sharding_constraint", 'unknown axis name: "w"', "6:10", _constraint('<@mesh, [{"w"}, {}]>')),
    "axis_twice": ("sdy.sharding_constraint", 'duplicate axis ref: "x"', "6:10",
                   _constraint('<@mesh, [{"x"}, {"x"}]>')),
    "axis_twice_in_a_dim": ("sdy.sharding_constraint", 'duplicate axis ref: "y"', "6:10",
                            _constraint('<@mesh, [{"y", "y"}, {}]>')),
    "replicated_twice": ("sdy.sharding_constraint", 'duplicate axis ref: "x"', "6:10",
                         _constraint('<@mesh, [{"x"}, {}], replicated={"x"}>')),
    "replicated_order": ("sdy.sharding_constraint", "replicated axes are not ordered w.r.t. mesh", "6:10",
                         _constraint('<@mesh, [{}, {}], replicated={"y", "x"}>')),
    "unreduced_unknown": ("sdy.sharding_constraint", 'unknown axis name: "w"', "6:10",
                          _constraint('<@mesh, [{}, {}], unreduced={"w"}>')),
    "sub_axis_size_one": ("sdy.sharding_constraint", "sub-axis sizes must be greater than 1", "6:10",
                          _constraint('<@mesh, [{"z":(2)1}, {}]>')),
    "sub_axis_not_dividing": ("sdy.sharding_constraint", "doesn't divide the size of the full axis 8", "6:10",
                              _constraint('<@mesh, [{"z":(4)4}, {}]>')),
    "sub_axis_whole_axis": ("sdy.sharding_constraint", "sub-axis size is equal to the full axis size", "6:10",
                            _constraint('<@mesh, [{"z":(1)8}, {}]>')),
    "sub_axes_overlap": ("sdy.sharding_constraint", "overlapping sub-axes", "6:10",
                         _constraint('<@mesh, [{"z":(1)4}, {"z":(2)2}]>')),
    "sub_axis_and_axis": ("sdy.sharding_constraint", 'both sub-axis and full-axis are used for axis name: "z"', "6:10",
                          _constraint('<@mesh, [{"z"}, {"z":(1)2}]>')),
    "sub_axis_pre_size_zero": ("sdy.sharding_constraint", "sub-axis pre-size must be at least 1", "6:10",
                               _constraint('<@mesh, [{"z":(0)2}, {}]>')),
    "priority_on_closed_empty_dim": ("sdy.sharding_constraint", "dim 0 is empty and closed but has a priority", "6:10",
                                     _constraint('<@mesh, [{}p1, {}]>')),
    "maximal_mesh_with_dims": ("sdy.sharding_constraint", "can only have rank 0", "6:10",
                               _constraint('<@maximal, [{}, {}]>')),
    "reshard_unknown_axis": ("sdy.reshard", 'unknown axis name: "w"', "6:10",
                             _constraint('<@mesh, [{"w"}, {}]>').replace("sharding_constraint", "reshard")),
    "axis_size_zero": ("sdy.mesh", "axis size must be at least 1, got: 0", "2:3", _mesh('<["x"=0]>')),
    "axis_name_twice": ("sdy.mesh", 'duplicate axis name: "x"', "2:3", _mesh('<["x"=2, "x"=2]>')),
    "device_ids_count": ("sdy.mesh", "must match total number of device ids, got: 2 != 1", "2:3",
                         _mesh('<["x"=2], device_ids=[0]>')),
    "device_ids_not_a_permutation": ("sdy.mesh", "sorted device ids must be iota(product(axes)), got: [0, 2]", "2:3",
                                     _mesh('<["x"=2], device_ids=[0, 2]>')),
    "device_id_negative": ("sdy.mesh", "device id must be non-negative, got: -1", "2:3",
                           _mesh('<["x"=2], device_ids=[-1, 0]>')),
    "mesh_in_a_function": ("sdy.mesh", "expects parent op 'builtin.module'", "3:5",
                           'module {\n  func.func @f() {\n    sdy.mesh @m = <["x"=2]>\n    return\n  }\n}\n'),
    "in_shardings_count": ("sdy.manual_computation", "operand shardings don't match number of values: 0 shardings vs 1",
                           "6:10", _manual("%a", "", X_IN, '"x"', "%b: tensor<4x8xf32>", GOOD_BODY, SIG)),
    "out_shardings_count": ("sdy.manual_computation", "result shardings don't match number of values: 2 shardings vs "
                            "1", "6:10", _manual("%a", X_IN, X_IN + ", " + X_IN, '"x"', "%b: tensor<4x8xf32>",
                                               GOOD_BODY, SIG)),
    "in_sharding_unknown_axis": ("sdy.manual_computation", 'operand 0 - unknown axis name: "w"', "6:10",
                                 _manual("%a", '<@mesh, [{"w"}, {}]>', X_IN, '"x"', "%b: tensor<4x8xf32>", GOOD_BODY,
                                         SIG)),
    "unknown_manual_axis": ("sdy.manual_computation", 'unknown manual axis: "w"', "6:10",
                            _manual("%a", X_IN, X_IN, '"x", "w"', "%b: tensor<4x8xf32>", GOOD_BODY, SIG)),
    "local_argument_type": ("sdy.manual_computation", "Expected local shape tensor<4x8xf32>, actual local shape "
                            "tensor<8x8xf32>", "6:10",
                            _manual("%a", X_IN, X_IN, '"x"', "%b: tensor<8x8xf32>",
                                    "      sdy.return %b : tensor<8x8xf32>", SIG)),
    "local_result_type": ("sdy.manual_computation", "result shape, corresponding sharding, and region result shape at "
                          "index 0 must match. Expected local shape tensor<8x8xf32>, actual local shape "
                          "tensor<4x8xf32>", "6:10",
                          _manual("%a", X_IN, '<@mesh, [{}, {}]>', '"x"', "%b: tensor<4x8xf32>", GOOD_BODY, SIG)),
    "manual_split_not_dividing": ("sdy.manual_computation", "operand 0 - dimension 0 of size 6 is not divisible by the "
                                  "manual axes size 4", "6:10",
                                  _manual("%s", '<@mesh, [{"y"}, {}]>', '<@mesh, [{"y"}, {}]>', '"y"',
                                          "%b: tensor<1x8xf32>", "      sdy.return %b : tensor<1x8xf32>",
                                          "(tensor<6x8xf32>) -> tensor<6x8xf32>")),
    "manual_axis_after_free_axis": ("sdy.manual_computation", "must have all manual axes come before free axes", "6:10",
                                    _manual("%a", '<@mesh, [{"y", "x"}, {}]>', '<@mesh, [{"y", "x"}, {}]>', '"x"',
                                            "%b: tensor<4x8xf32>", GOOD_BODY, SIG)),
    "region_argument_count": ("sdy.manual_computation", "number of op operands and region operands must match. Op has "
                              "1 op operands and 2 region operands", "6:10",
                              _manual("%a", X_IN, X_IN, '"x"', "%b: tensor<4x8xf32>, %c: tensor<4x8xf32>", GOOD_BODY,
                                      SIG)),
    "body_without_sdy_return": ("sdy.manual_computation", "body must end with 'sdy.return'", "6:10",
                                _manual("%a", X_IN, X_IN, '"x"', "%b: tensor<4x8xf32>",
                                        "      stablehlo.return %b : tensor<4x8xf32>", SIG)),
    "different_meshes": ("sdy.manual_computation", "all in and out shardings must be bound to the same mesh", "6:10",
                         _manual("%a", X_IN, '<@other, [{"x"}, {}]>', '"x"', "%b: tensor<4x8xf32>", GOOD_BODY, SIG)),
    "manual_axis_bound_twice": ("sdy.manual_computation", 'operates on axis "x" which is already bound by a parent '
                                "sdy.manual_computation op", "7:12", _manual(
                                    "%a", X_IN, X_IN, '"x"', "%b: tensor<4x8xf32>",
                                    f"      %1 = sdy.manual_computation(%b) in_shardings=[{X_IN}] out_shardings=["
                                    f'{X_IN}] manual_axes={{"x"}} (%c: tensor<2x8xf32>) {{\n'
                                    "        sdy.return %c : tensor<2x8xf32>\n      } : (tensor<4x8xf32>) -> "
                                    "tensor<4x8xf32>\n      sdy.return %1 : tensor<4x8xf32>", SIG)),
    "sharding_on_manual_axis_inside": ("sdy.sharding_constraint", 'operates on axis "x" which is already bound by a '
                                       "parent sdy.manual_computation op", "7:12", _manual(
                                           "%a", X_IN, X_IN, '"x"', "%b: tensor<4x8xf32>",
                                           f"      %1 = sdy.sharding_constraint %b {X_IN} : tensor<4x8xf32>\n"
                                           "      sdy.return %1 : tensor<4x8xf32>", SIG)),
}


def _mlir_rejects(jax_ir, text: str) -> str | None:
    """jaxlib's error for the program (parsing with its verifier), or None if it accepts it."""
    ir, ctx = jax_ir
    with ctx:
        try:
            ir.Module.parse(text).operation.verify()
        except Exception as e:
            return str(e)
    return None


@pytest.mark.parametrize("case", sorted(BAD_PROGRAMS))
def test_verifier_rejects_at_the_ops_location(jax_ir, case):
    op_name, message, where, text = BAD_PROGRAMS[case]
    with pytest.raises(VerifyError) as info:
        lir.parse(text)
    error = info.value
    assert error.op.name == op_name
    assert message in error.message
    assert str(error).startswith(f"-:{where}: error: '{op_name}' op "), str(error)
    assert _mlir_rejects(jax_ir, text) is not None, "jaxlib accepts the program"


def test_uneven_dimension_sizes_are_allowed(jax_ir):
    """XLA pads a dimension the mesh axes do not divide: 7 rows over x (2) and z (8)."""
    text = _constraint('<@mesh, [{"x", "z"}, {"y"}]>', "tensor<7x3xf32>")
    lir.parse(text)
    assert _mlir_rejects(jax_ir, text) is None


# Shardings of function arguments and results, and on ops' attributes -------------------------

def _func_attrs(arg: str, result: str, op_attr: str = "") -> str:
    return (HEADER + f"  func.func @f(%a: tensor<8x8xf32> {arg}) -> (tensor<8x8xf32> {result}) {{\n"
            f"    %0 = stablehlo.abs %a {op_attr}: tensor<8x8xf32>\n    return %0 : tensor<8x8xf32>\n  }}\n}}\n")


BAD_ATTRIBUTES = {
    "arg_unknown_axis": ("func.func", 'arg 0 - unknown axis name: "w"', "5:3",
                         _func_attrs('{sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}]>}', "")),
    "result_rank": ("func.func", "result 0 - sharding doesn't match tensor rank: 3 != 2", "5:3",
                    _func_attrs("", "{sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}")),
    "arg_unknown_mesh": ("func.func", "arg 0 - unknown mesh: @nomesh", "5:3",
                         _func_attrs("{sdy.sharding = #sdy.sharding<@nomesh, [{}, {}]>}", "")),
    "arg_unranked": ("func.func", "arg 0 - only ranked tensors can have a sharding, got 'tensor<*xf32>'", "5:3",
                     HEADER + "  func.func @f(%a: tensor<*xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {\n"
                     "    return\n  }\n}\n"),
    "arg_token": ("func.func", "arg 0 - a sharding on the non-shaped type '!stablehlo.token' can only have rank 0",
                  "5:3", HEADER + "  func.func @f(%a: !stablehlo.token {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {\n"
                  "    return\n  }\n}\n"),
    "arg_not_a_sharding": ("func.func", "arg 0 - should have a sharding attribute of type TensorShardingAttr", "5:3",
                           _func_attrs("{sdy.sharding = 1 : i64}", "")),
    "op_result_count": ("stablehlo.abs", "sdy.sharding has 2 shardings for 1 results", "6:10",
                        _func_attrs("", "", "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, "
                                            "<@mesh, [{}, {}]>]>} ")),
    "op_result_axis_twice": ("stablehlo.abs", 'result 0 - duplicate axis ref: "x"', "6:10",
                             _func_attrs("", "", '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, '
                                                 '{"x"}]>]>} ')),
}


@pytest.mark.parametrize("case", sorted(BAD_ATTRIBUTES))
def test_verify_shardings_checks_function_and_op_attributes(jax_ir, case):
    op_name, message, where, text = BAD_ATTRIBUTES[case]
    module = lir.parse(text)  # the module's own verifier does not look at discardable attributes
    with pytest.raises(VerifyError) as info:
        sdy.verify_shardings(module)
    error = info.value
    assert error.op.name == op_name and message in error.message
    assert str(error).startswith(f"-:{where}: error: '{op_name}' op "), str(error)
    assert _mlir_rejects(jax_ir, text) is not None, "jaxlib accepts the program"


# Malformed text -------------------------------------------------------------------------------

def _mlir_error_column(jax_ir, text: str) -> str:
    m = re.search(r'"-":(\d+):(\d+)', _mlir_rejects(jax_ir, text) or "")
    assert m, "jaxlib accepts the text"
    return f"{m.group(1)}:{m.group(2)}"


BAD_TEXT = {
    # (text, message, where the offending token is)
    "stripped_sharding": (_constraint('<@mesh, [{"x" "y"}, {}]>'), "expected ','", "6:51"),
    "stripped_sharding_open_then_axis": (_constraint('<@mesh, [{?, "x"}, {}]>'), "expected '}' after '?'", "6:50"),
    "stripped_mesh": (_mesh('<["x"=2 "y"=2]>'), "expected ','", "2:27"),
    "manual_axes": (_manual("%a", X_IN, X_IN, '"x" "y"', "%b: tensor<4x8xf32>", GOOD_BODY, SIG),
                    "expected ','", "6:127"),
    "dialect_attribute": (_func_attrs('{sdy.sharding = #sdy.sharding<@mesh, [{"x"}; {}]>}', ""),
                          "expected ','", "5:79"),
}


@pytest.mark.parametrize("case", sorted(BAD_TEXT))
def test_malformed_sdy_text_is_located(jax_ir, case):
    text, message, where = BAD_TEXT[case]
    with pytest.raises(ParseError) as info:
        lir.parse(text)
    assert message in info.value.message
    assert f"{info.value.line}:{info.value.column}" == where, str(info.value)
    assert str(info.value).startswith(f"-:{where}: error: ")
    # jaxlib rejects it on the same line (its column is where the expected token would start)
    assert _mlir_error_column(jax_ir, text).split(":")[0] == where.split(":")[0]


# Builders against jaxlib ----------------------------------------------------------------------

def tensor(*shape: int) -> RankedTensorType:
    return RankedTensorType(tuple(shape), f32, None)


def _built_module() -> ModuleOp:
    """`sdy.mesh`, a sharding constraint, a reshard, a sharding group and a manual computation
    with collectives in its body, made with the builders."""
    mesh = sdy.MeshAttr((("x", 2), ("y", 4)))
    block = lir.Block([tensor(8, 16)])
    b = Builder(InsertionPoint.at_end(block))
    (a,) = block.args
    c = sdy.ShardingConstraintOp.build(b, a, sdy.TensorShardingAttr.get("mesh", [["x"], []])).result
    r = sdy.ReshardOp.build(b, c, sdy.TensorShardingAttr.get("mesh", [["x"], ["y"]])).result
    sdy.ShardingGroupOp.build(b, r, 3)

    def body(bb: Builder, args):
        (x,) = args  # local tensor<4x4xf32>
        s = shlo.AllReduceOp.build(bb, [x], [[0, 1, 2, 3], [4, 5, 6, 7]], "add", channel_handle=1,
                                   use_global_device_ids=True).results[0]
        return [s]
    xy = sdy.TensorShardingAttr.get("mesh", [["x"], ["y"]])
    m = sdy.ManualComputationOp.build(b, [r], [xy], [xy], ["x", "y"], mesh, body)
    b.insert(FuncReturnOp.build([m.results[0]]))
    fn = FuncOp.build("main", FunctionType((tensor(8, 16),), (tensor(8, 16),)), declaration=True)
    fn.regions[0].add_block(block)
    sdy.set_func_shardings(fn, [sdy.TensorShardingAttr.get("mesh", [["x"], []])], [xy])
    module = ModuleOp.build([fn])
    sdy.MeshOp.build(Builder(InsertionPoint.at_start(module.regions[0].blocks[0])), "mesh", mesh)
    return module


def test_builders_make_what_jaxlib_prints(jax_ir):
    module = _built_module()
    module.verify()
    pretty, generic = print_op(module), print_op(module, generic=True)
    assert "sdy.manual_computation(%1) in_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>]" in pretty
    assert '@main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})' in pretty
    assert "sdy.sharding_group %1 group_id=3 : tensor<8x16xf32>" in pretty
    assert "(%arg1: tensor<4x4xf32>) {" in pretty and "} : (tensor<8x16xf32>) -> tensor<8x16xf32>" in pretty
    ir, ctx = jax_ir
    with ctx:
        theirs = ir.Module.parse(pretty)
        theirs.operation.verify()
        assert theirs.operation.get_asm() == pretty
        assert theirs.operation.get_asm(print_generic_op_form=True) == generic


def test_manual_computation_types_and_mesh():
    module = _built_module()
    op = next(o for o in module.walk() if isinstance(o, sdy.ManualComputationOp))
    assert op.mesh is sdy.MeshAttr((("x", 2), ("y", 4)))
    assert [a.type for a in op.body.blocks[0].args] == [tensor(4, 4)]
    assert op.results[0].type is tensor(8, 16)
    s = sdy.TensorShardingAttr.get("mesh", [["x", "y"], []])
    assert sdy.local_type(tensor(16, 3), s, ["y"], op.mesh) is tensor(4, 3)
    assert sdy.global_type(tensor(2, 3), s, ["x", "y"], op.mesh) is tensor(16, 3)
    with pytest.raises(ValueError, match="dimension 0 of size 6 is not divisible by the manual axes size 8"):
        sdy.local_type(tensor(6, 3), s, ["x", "y"], op.mesh)
    assert sdy.lookup_mesh(op, "mesh") is op.mesh and sdy.lookup_mesh(op, "nomesh") is None


def test_sharding_error_reports_without_an_op():
    mesh = sdy.MeshAttr((("x", 2),))
    assert sdy.sharding_error(sdy.TensorShardingAttr.get("m", [["x"]]), tensor(5), mesh) is None
    assert sdy.sharding_error(sdy.TensorShardingAttr.get("m", [["y"]]), tensor(5), mesh) == 'unknown axis name: "y"'
    assert sdy.mesh_error(sdy.MeshAttr((("x", 2), ("x", 3)))) == 'duplicate axis name: "x"'


@pytest.mark.parametrize("path", PRETTY, ids=lambda p: p.stem)
def test_sharded_program_prints_with_locations_as_jaxlib_does(jax_ir, path):
    """Read as text named `-`, both printers give every op (and region argument) its location."""
    text = path.read_text()
    ir, ctx = jax_ir
    with ctx:
        theirs = ir.Module.parse(text)
        expected = [theirs.operation.get_asm(enable_debug_info=True, print_generic_op_form=g) for g in (False, True)]
    module = lir.parse(text)
    assert [print_op(module, debuginfo=True, generic=g) for g in (False, True)] == expected


def test_func_shardings_are_read_and_replaced():
    module = _built_module()
    fn = next(o for o in module.walk() if isinstance(o, FuncOp))
    fn.properties["arg_attrs"] = lir.ArrayAttr((lir.DictionaryAttr.get({"tag": lir.UNIT}),))
    x = sdy.TensorShardingAttr.get("mesh", [["x"], []])
    sdy.set_func_shardings(fn, args=[x])
    args, results = sdy.func_shardings(fn)
    assert args == [x] and results == [sdy.TensorShardingAttr.get("mesh", [["x"], ["y"]])]
    assert fn.properties["arg_attrs"].elements[0].as_dict() == {"tag": lir.UNIT, "sdy.sharding": x}
    sdy.set_func_shardings(fn, args=[None], results=[None])
    assert sdy.func_shardings(fn) == ([None], [None]) and "res_attrs" not in fn.properties
    with pytest.raises(ValueError, match="2 shardings for 1 values"):
        sdy.set_func_shardings(fn, args=[x, x])
