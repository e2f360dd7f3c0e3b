"""sharding-propagation: from the annotated values, every value gets a sharding through the ops'
factor rules (forward and backward, open dimensions extended, closed ones kept, conflicts by
priority then the larger axis), written as `sdy.sharding` the way Shardy writes it (jaxlib
parses the result). What the propagated shardings make a program compute is tested end to end
against JAX in test_spmd_partition.py."""

from __future__ import annotations

import json
import pathlib

import pytest

import loom
from loom.rewrite import PassManager
from loom.rewrite.passes import PassError
from loom.transforms.sharding_propagation import SHARDING_RULES, rule_of

MESH = '"sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=4]>, sym_name = "mesh"}> : () -> ()'


def propagate(body: str, args: str, results: str) -> loom.ir.Operation:
    module = loom.ir.parse(f"module {{\n{MESH}\nfunc.func @main({args}) -> ({results}) {{\n{body}\n}}\n}}")
    PassManager.parse("sharding-propagation").run(module)
    return module


def shardings(module) -> dict[str, str]:
    """Op name (with a counter when repeated) -> its results' sharding text; 'arg0'... and
    'res0'... for the function's."""
    fn = next(op for op in module.regions[0].entry.ops if op.name == "func.func")
    out = {f"arg{i}": str(d.get_value("sdy.sharding")) for i, d in enumerate(fn.properties["arg_attrs"])}
    out.update({f"res{i}": str(d.get_value("sdy.sharding")) for i, d in enumerate(fn.properties["res_attrs"])})
    seen: dict[str, int] = {}
    for op in fn.walk():
        if "sdy.sharding" in op.attributes:
            n = seen.get(op.name, 0)
            seen[op.name] = n + 1
            out[op.name + (f"#{n}" if n else "")] = str(op.attributes["sdy.sharding"])
    return out


def S(*dims: str) -> str:
    return "#sdy.sharding<@mesh, [" + ", ".join(dims) + "]>"


def PV(*dims: str) -> str:
    return "#sdy.sharding_per_value<[<@mesh, [" + ", ".join(dims) + "]>]>"


def test_forward_through_a_matmul_chain():
    got = shardings(propagate(
        """%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
            : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
        %1 = stablehlo.tanh %0 : tensor<8x32xf32>
        return %1 : tensor<8x32xf32>""",
        '%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, '
        '%b: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}',
        "tensor<8x32xf32>"))
    assert got["stablehlo.dot_general"] == PV('{"x"}', '{"y"}')
    assert got["stablehlo.tanh"] == PV('{"x"}', '{"y"}')
    assert got["res0"] == S('{"x"}', '{"y"}')


def test_backward_from_the_result_to_open_arguments():
    got = shardings(propagate(
        """%0 = stablehlo.add %a, %b : tensor<8x16xf32>
        %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
        return %1 : tensor<16x8xf32>""",
        "%a: tensor<8x16xf32>, %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}]>}",
        'tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}'))
    assert got["arg0"] == S('{"x"}', '{"y"}')
    assert got["arg1"] == S('{"x"}', "{}")  # its second dimension is closed
    assert got["stablehlo.add"] == PV('{"x"}', '{"y"}')


def test_conflicts_go_to_the_priority_then_the_larger_axis():
    body = """%0 = stablehlo.multiply %a, %b : tensor<8x8xf32>
        return %0 : tensor<8x8xf32>"""
    by_size = shardings(propagate(body, '%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, '
                                        '%b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}',
                                  "tensor<8x8xf32>"))
    assert by_size["stablehlo.multiply"] == PV("{}", '{"y"}')
    by_priority = shardings(propagate(body, '%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}p0]>}, '
                                            '%b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}p1]>}',
                                      "tensor<8x8xf32>"))
    assert by_priority["stablehlo.multiply"] == PV("{}", '{"x"}')


@pytest.mark.parametrize("arg, result", [
    ('[{"x"}, {}]', '[{"x"}]'),        # the major factor of the merged dimension: expressible
    ('[{}, {"x"}]', "[{}]"),           # the minor factor alone: not expressible without sub-axes
    ('[{"y"}, {"x"}]', '[{"y"}]'),     # 8 = 4 x 2 rows per shard: only the major split carries over
])
def test_reshape_merging_dimensions(arg, result):
    got = shardings(propagate(
        """%0 = stablehlo.reshape %a : (tensor<8x6xf32>) -> tensor<48xf32>
        return %0 : tensor<48xf32>""",
        f"%a: tensor<8x6xf32> {{sdy.sharding = #sdy.sharding<@mesh, {arg}>}}", "tensor<48xf32>"))
    assert got["res0"] == f"#sdy.sharding<@mesh, {result}>"


def test_reduction_factors_and_factors_kept_whole():
    got = shardings(propagate(
        """%z = stablehlo.constant dense<0.0> : tensor<f32>
        %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]
            : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
        %1 = "stablehlo.sort"(%a) <{dimension = 1 : i64}> ({
        ^bb0(%p: tensor<f32>, %q: tensor<f32>):
          %c = stablehlo.compare LT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
        }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
        return %0, %1 : tensor<8xf32>, tensor<8x16xf32>""",
        '%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}',
        "tensor<8xf32>, tensor<8x16xf32>"))
    assert got["stablehlo.reduce"] == PV('{"x"}')
    assert got["stablehlo.sort"] == PV('{"x"}', "{}")  # the sorted dimension stays whole


def test_while_carries_share_one_sharding():
    module = propagate(
        """%0 = stablehlo.while(%it = %a) : tensor<8x16xf32>
          cond {
            %c = stablehlo.constant dense<true> : tensor<i1>
            stablehlo.return %c : tensor<i1>
          } do {
            %n = stablehlo.negate %it : tensor<8x16xf32>
            stablehlo.return %n : tensor<8x16xf32>
          }
        return %0 : tensor<8x16xf32>""",
        "%a: tensor<8x16xf32>", 'tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}')
    got = shardings(module)
    assert got["arg0"] == got["res0"] == S("{}", '{"y"}')
    assert got["stablehlo.while"] == got["stablehlo.negate"] == PV("{}", '{"y"}')


def test_propagation_is_deterministic_and_jaxlib_parses_it():
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir as jax_ir
    corpus = json.loads((pathlib.Path(__file__).parent / "spmd_corpus" / "programs.json").read_text())
    text = next(r["text"] for r in corpus if r["name"] == "mlp_2d_grad")
    outs = []
    for _ in range(2):
        module = loom.ir.parse(text)
        PassManager.parse("inline{default-pipeline=},symbol-dce,sharding-propagation").run(module)
        outs.append(loom.ir.print(module, generic=True))
    assert outs[0] == outs[1]
    module = loom.ir.parse(outs[0])
    fn = next(op for op in module.regions[0].entry.ops if op.name == "func.func")
    assert all("sdy.sharding" in op.attributes for op in fn.walk() if op is not fn and op.results)
    with jax_mlir.make_ir_context():
        assert jax_ir.Module.parse(outs[0]).operation.verify()


def test_bad_shardings_are_errors_naming_the_value():
    with pytest.raises(PassError, match="argument 0 of @main: a sharding of 1 dimensions for a tensor of rank 2"):
        propagate("return %a : tensor<8x8xf32>", '%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}',
                  "tensor<8x8xf32>")
    with pytest.raises(PassError, match="argument 0 of @main: sub-axis"):
        propagate("return %a : tensor<8x8xf32>",
                  '%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2}, {}]>}', "tensor<8x8xf32>")


def test_rules_come_from_the_op_families_and_the_trait():
    assert "stablehlo.dot_general" in SHARDING_RULES and "stablehlo.add" not in SHARDING_RULES
    op = loom.ir.parse("""func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.add %a, %a : tensor<4xf32>
      return %0 : tensor<4xf32>
    }""").regions[0].entry.first_op.regions[0].entry.first_op
    rule = rule_of(op)
    assert rule.operands == [[[0]], [[0]]] and rule.results == [[[0]]] and rule.sizes == [4]


def test_a_sharding_over_another_mesh_or_axis_is_an_error():
    with pytest.raises(PassError, match="argument 0 of @main: .* is not over @mesh"):
        propagate("return %a : tensor<8xf32>", '%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x"}]>}',
                  "tensor<8xf32>")
    with pytest.raises(PassError, match="argument 0 of @main: .* names axis 'w', which @mesh lacks"):
        propagate("return %a : tensor<8xf32>", '%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}]>}',
                  "tensor<8xf32>")


def test_unreduced_inputs_are_an_error():
    with pytest.raises(PassError, match="argument 0 of @main: .* holds partial sums"):
        propagate("return %a : tensor<8xf32>",
                  '%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}', "tensor<8xf32>")


def test_an_open_constraint_is_extended_and_closed():
    module = propagate(
        """%0 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, [{?}, {}]>}>
            : (tensor<8x8xf32>) -> tensor<8x8xf32>
        %1 = stablehlo.negate %0 : tensor<8x8xf32>
        return %1 : tensor<8x8xf32>""",
        '%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}', "tensor<8x8xf32>")
    constraint = next(op for op in module.walk() if op.name == "sdy.sharding_constraint")
    assert str(constraint.properties["sharding"]) == S('{"y"}', "{}")
    assert shardings(module)["stablehlo.negate"] == PV('{"y"}', "{}")


def test_splits_pass_through_windows_but_not_through_slices():
    """A padded, reversed or pooled dimension keeps its operand's split (the partitioner
    exchanges halos there); a sliced one is left whole for the partitioner to decide."""
    got = shardings(propagate(
        """%z = stablehlo.constant dense<0.0> : tensor<f32>
        %0 = stablehlo.pad %a, %z, low = [1, 0], high = [1, 0], interior = [0, 0]
            : (tensor<8x16xf32>, tensor<f32>) -> tensor<10x16xf32>
        %1 = stablehlo.reverse %0, dims = [0] : tensor<10x16xf32>
        %2 = "stablehlo.reduce_window"(%1, %z) <{window_dimensions = array<i64: 3, 1>}> ({
        ^bb0(%p: tensor<f32>, %q: tensor<f32>):
          %s = stablehlo.maximum %p, %q : tensor<f32>
          stablehlo.return %s : tensor<f32>
        }) : (tensor<10x16xf32>, tensor<f32>) -> tensor<8x16xf32>
        %3 = stablehlo.slice %2 [2:6, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
        return %3 : tensor<4x16xf32>""",
        '%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}', "tensor<4x16xf32>"))
    for name in ("stablehlo.pad", "stablehlo.reverse", "stablehlo.reduce_window"):
        assert got[name] == PV('{"x"}', '{"y"}'), name
    assert got["stablehlo.slice"] == PV("{}", '{"y"}')
