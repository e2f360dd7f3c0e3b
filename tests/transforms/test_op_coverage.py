"""Every op of every dialect loom runs (stablehlo, chlo, ad, knn, stack) has a rule in every rule
table (interpreter, compiled numpy, torch, JVP, VJP, batching), or an explicit
`unsupported("reason")` declared next to it in its family module under loom/ops; and a missing rule
stays a clear error naming the op and the table at run time."""

from __future__ import annotations

import jax.lax
import jax.numpy as jnp
import numpy as np
import pytest

import loom
from loom.backend.common import MissingRuleError as ExecutorMissingRuleError
from loom.dialects import stablehlo
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.types import FunctionType, RankedTensorType, f32
from loom.ops import elementwise, registry
from loom.transforms import autodiff, batching, forward_ad


def test_every_op_has_a_rule_or_a_reason_in_every_table():
    missing = registry.missing_rules()
    assert not missing, "ops with neither a rule nor unsupported(...) in loom/ops:\n" + "\n".join(
        f"  {op}: {table}" for op, table in missing)


def test_the_walk_covers_the_dialects():
    ops = registry.covered_ops()
    for name in ("stablehlo.add", "stablehlo.while", "chlo.erf", "ad.stop_gradient", "knn.approx_top_k", "stack.push"):
        assert name in ops
    assert set(registry.RULE_TABLES) == {"interpreter", "numpy", "torch", "jvp", "vjp", "batching", "sharding"}


def test_declarations_name_known_ops_and_do_not_hide_rules():
    """A declaration is for an op that exists and lacks the rule (a stale one would hide a rule)."""
    ops = set(registry.covered_ops())
    for (op, table), why in registry.UNSUPPORTED.items():
        assert op in ops, f"{op} is declared unsupported but no dialect defines it"
        assert why.reason
        if why.until_loaded is None:
            assert not registry.RULE_TABLES[table](op), f"{op} has a rule in {table} and a declaration: {why.reason}"


def test_a_declaration_until_a_module_loads_gives_way_to_its_rule():
    """`knn.fused_score_top_k` has no torch rule until loom.backend.triton_knn loads (CUDA), then has one."""
    import importlib
    why = registry.UNSUPPORTED[("knn.fused_score_top_k", "torch")]
    assert why.until_loaded == "loom.backend.triton_knn"
    pytest.importorskip("triton")
    importlib.import_module(why.until_loaded)
    assert registry.RULE_TABLES["torch"]("knn.fused_score_top_k")


def test_a_table_refuses_a_second_rule():
    table: dict = {}
    registry.register(table, "x.op", len)
    registry.register(table, "x.op", len)  # the same rule again is harmless
    with pytest.raises(ValueError, match="x.op"):
        registry.register(table, "x.op", abs)
    with pytest.raises(KeyError, match="layout"):
        registry.declare("x.op", registry.unsupported("why"), tables=("layout",))


def test_every_elementwise_trait_op_batches_and_is_elementwise_in_the_executor():
    from loom.backend.compiled import ELEMENTWISE
    for dialect in ("stablehlo", "chlo"):
        for name, cls in loom.ir.opdef.DIALECTS[dialect].ops.items():
            if stablehlo.Elementwise in cls.definition.trait_set:
                assert batching.BATCH_RULES[name] is batching.elementwise_rule, name
                assert name in ELEMENTWISE, name
    assert "stablehlo.reduce_precision" in ELEMENTWISE


def test_elementwise_rows_name_jax_bindings():
    """The lax / loom.numpy names of a row are JAX's, so the front end can generate them."""
    for row in elementwise.OPS:
        assert stablehlo.Elementwise in row.op.definition.trait_set, row.name
        if row.lax is not None:
            assert hasattr(jax.lax, row.lax), f"{row.name}: jax.lax has no {row.lax}"
        if row.lnp is not None:
            assert hasattr(jnp, row.lnp), f"{row.name}: jax.numpy has no {row.lnp}"


def _single_op_function(name: str, n_operands: int) -> loom.ir.core.Operation:
    t = RankedTensorType((3,), f32, None)
    fn = loom.dialects.func.FuncOp.build("main", FunctionType((t,) * n_operands, (t,)))
    b = Builder(InsertionPoint.at_end(fn.regions[0].entry))
    out = b.create(name, list(fn.regions[0].entry.args), [t], {}, {}).results[0]
    b.insert(loom.dialects.func.ReturnOp.build([out], fn.location))
    return fn


@pytest.mark.parametrize("transformation", ["vjp", "jvp"])
def test_missing_derivative_is_an_error_naming_op_and_table(transformation):
    fn = _single_op_function("chlo.polygamma", 2)
    with pytest.raises(autodiff.MissingRuleError, match=rf"{transformation}.*chlo.polygamma"):
        if transformation == "vjp":
            autodiff.vjp_function(fn, [0, 1])
        else:
            forward_ad.jvp_function(fn)


def test_missing_kernel_is_an_error_naming_op_and_executor():
    module = loom.ir.parse("""
func.func @main(%x: tensor<3xf32>, %n: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "chlo.broadcast_polygamma"(%n, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}""")
    x = np.ones(3, np.float32)
    for executor in ("compiled", "interpreter"):
        with pytest.raises(ExecutorMissingRuleError, match=r"chlo.broadcast_polygamma"):
            loom.execute(module, x, x, executor=executor)


@pytest.mark.parametrize("transformation", ["vjp", "jvp"])
def test_an_unsupported_partial_is_an_error_only_when_needed(transformation):
    """zeta is differentiated in q, not in x: asking for x's derivative names the op and operand."""
    fn = _single_op_function("chlo.zeta", 2)
    with pytest.raises(autodiff.MissingRuleError, match=rf"{transformation}.*chlo.zeta.*operand 0"):
        if transformation == "vjp":
            autodiff.vjp_function(fn, [0, 1])
        else:
            forward_ad.jvp_function(fn)
    if transformation == "vjp":
        assert autodiff.vjp_function(fn, [1]) is not None
    else:
        assert forward_ad.jvp_function(fn, inactive=[0]) is not None
