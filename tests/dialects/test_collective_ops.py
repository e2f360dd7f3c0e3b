"""The StableHLO collectives against their oracles: the result types loom infers are the ones JAX
wrote in the sharded corpus; every verifier error is located at the op, where jaxlib's verifier
rejects the same program (or, for the spec's constraints MLIR does not check, is the spec's rule);
what the builders make is what jaxlib accepts and prints."""

from __future__ import annotations

import re

import pytest
from support.paths import CORPUS

import loom.ir as lir
from loom.dialects import stablehlo as shlo
from loom.dialects.builtin import ModuleOp
from loom.dialects.func import FuncOp
from loom.dialects.func import ReturnOp as FuncReturnOp
from loom.ir import Builder, FunctionType, InsertionPoint, RankedTensorType, VerifyError
from loom.ir.printer import print_op
from loom.ir.types import IntegerType, f32, i32

SHARDED = sorted(p for p in (CORPUS / "sharded").glob("*.mlir") if not p.name.endswith(".generic.mlir"))
COLLECTIVES = (shlo.AllGatherOp, shlo.AllReduceOp, shlo.ReduceScatterOp, shlo.AllToAllOp, shlo.CollectivePermuteOp,
               shlo.CollectiveBroadcastOp, shlo.PartitionIdOp, shlo.ReplicaIdOp)


def _collective_ops():
    for path in SHARDED:
        for op in lir.parse(path.read_text()).walk():
            if isinstance(op, COLLECTIVES):
                yield path.stem, op


def test_inferred_result_types_are_the_ones_jax_wrote():
    seen = set()
    for name, op in _collective_ops():
        inferred = type(op).infer_result_types(op.operand_types, op.properties, op.regions)
        assert inferred == list(op.result_types), (name, op.name)
        seen.add(op.name)
    assert seen == {"stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
                    "stablehlo.all_to_all", "stablehlo.collective_permute", "stablehlo.partition_id"}


def test_process_groups_as_shard_map_writes_them():
    ops = dict(_collective_ops())
    psum = ops[next(n for n in ops if n.endswith("shard_map_psum"))]
    assert isinstance(psum, shlo.AllReduceOp)
    assert psum.mode == "flattened_ids" and psum.groups == [list(range(8))] and psum.group_size() == 8
    assert psum.channel_handle == shlo.ChannelHandle(1, 1) and psum.channel_handle.handle == 1
    permute = ops[next(n for n in ops if n.endswith("shard_map_ppermute"))]
    assert permute.mode == "cross_partition" and permute.pairs == [(i, (i + 1) % 8) for i in range(8)]
    gather = ops[next(n for n in ops if n.endswith("shard_map_all_gather_tiled"))]
    assert gather.groups == [[0, 1, 2, 3], [4, 5, 6, 7]] and gather.group_size() == 4


# Verifier errors ------------------------------------------------------------------------------

T = "tensor<4x4xf32>"
SUM = ('({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %s = "stablehlo.add"(%x, %y) : (tensor<f32>, '
       'tensor<f32>) -> tensor<f32>\n    "stablehlo.return"(%s) : (tensor<f32>) -> ()\n  })')
CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def _op(op: str, props: str, result: str, operand: str = T, region: str = "", attrs: str = "") -> str:
    """`%0 = "stablehlo.<op>"(%a)` on line 2, column 8, in a function of one argument."""
    return (f"func.func @f(%a: {operand}) {{\n  %0 = \"stablehlo.{op}\"(%a) <{{{props}}}> {region}: ({operand}) -> "
            f"{result}\n  return\n}}\n{attrs}")


GROUPS2 = "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>"

# name -> (op, message, text). jaxlib's verifier rejects each program at the same place.
BAD_PROGRAMS = {
    "all_gather_dim": ("all_gather", "all_gather_dim 2 is out of bounds for rank 2",
                       _op("all_gather", f"all_gather_dim = 2 : i64, {GROUPS2}", T)),
    "all_gather_not_a_multiple": ("all_gather", "incompatible with return type",
                                  _op("all_gather", f"all_gather_dim = 1 : i64, {GROUPS2}", "tensor<4x6xf32>")),
    "all_gather_other_dimension": ("all_gather", "incompatible with return type",
                                   _op("all_gather", f"all_gather_dim = 1 : i64, {GROUPS2}", "tensor<8x8xf32>")),
    "groups_rank": ("all_gather", "replica groups should be a rank 2 tensor",
                    _op("all_gather", "all_gather_dim = 1 : i64, replica_groups = dense<[0, 1]> : tensor<2xi64>",
                        "tensor<4x8xf32>")),
    "groups_repeated_id": ("all_gather", "replica id #0 seen more than once",
                           _op("all_gather", "all_gather_dim = 1 : i64, replica_groups = dense<[[0, 0]]> : "
                               "tensor<1x2xi64>", "tensor<4x8xf32>")),
    "groups_missing_id": ("all_reduce", "replica id #1 not seen in replica groups",
                          _op("all_reduce", "replica_groups = dense<[[0, 2]]> : tensor<1x2xi64>", T, region=SUM + " ")),
    "groups_padding_in_all_gather": ("all_gather", "invalid replica id -1",
                                     _op("all_gather", "all_gather_dim = 1 : i64, replica_groups = dense<[[0, -1]]> : "
                                         "tensor<1x2xi64>", "tensor<4x8xf32>")),
    "all_gather_zero_dim": ("all_gather", "dimension size of operand at 'all_gather_dim' cannot be zero",
                            _op("all_gather", f"all_gather_dim = 1 : i64, {GROUPS2}", "tensor<4x0xf32>",
                                operand="tensor<4x0xf32>")),
    "global_ids_empty_groups": ("all_reduce", "the replica groups cannot be empty",
                                _op("all_reduce", f"{CHANNEL}, replica_groups = dense<> : tensor<0x0xi64>, "
                                    "use_global_device_ids", T, region=SUM + " ")),
    "global_ids_without_channel": ("all_reduce", "channel_id must be positive when useGlobalDeviceIds is set",
                                   _op("all_reduce", f"{GROUPS2}, use_global_device_ids", T, region=SUM + " ")),
    "all_reduce_reducer_arity": ("all_reduce", "computation must take 2 arguments", _op(
        "all_reduce", GROUPS2, T, region='({\n  ^bb0(%x: tensor<f32>):\n    "stablehlo.return"(%x) : (tensor<f32>) -> '
        '()\n  }) ')),
    "all_reduce_result": ("all_reduce", "incompatible with return type",
                          _op("all_reduce", GROUPS2, "tensor<4x4xi32>", region=SUM + " ")),
    "reduce_scatter_dim": ("reduce_scatter", "scatter_dimension 3 is out of bounds for rank 2",
                           _op("reduce_scatter", f"{GROUPS2}, scatter_dimension = 3 : i64", "tensor<2x4xf32>",
                               region=SUM + " ")),
    "reduce_scatter_not_dividing": ("reduce_scatter", "operand scatter dimension has size 5, expected to be a multiple "
                                    "of the group size 2",
                                    _op("reduce_scatter", f"{GROUPS2}, scatter_dimension = 0 : i64", "tensor<2x4xf32>",
                                        operand="tensor<5x4xf32>", region=SUM + " ")),
    "reduce_scatter_rank": ("reduce_scatter", "operand and result should have same rank",
                            _op("reduce_scatter", f"{CHANNEL}, {GROUPS2}, scatter_dimension = 0 : i64", "tensor<2xf32>",
                                region=SUM + " ")),
    "all_to_all_split": ("all_to_all", "split dimension has size 5, expected to be a multiple of split_count 2",
                         _op("all_to_all", f"concat_dimension = 1 : i64, {GROUPS2}, split_count = 2 : i64, "
                             "split_dimension = 0 : i64", "tensor<2x8xf32>", operand="tensor<5x4xf32>")),
    "all_to_all_group_size": ("all_to_all", "group size of replica_groups must be 2",
                              _op("all_to_all", "concat_dimension = 1 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : "
                                  "tensor<1x4xi64>, split_count = 2 : i64, split_dimension = 0 : i64",
                                  "tensor<2x8xf32>")),
    "all_to_all_result": ("all_to_all", "incompatible with return type",
                          _op("all_to_all", f"concat_dimension = 1 : i64, {GROUPS2}, split_count = 2 : i64, "
                              "split_dimension = 0 : i64", "tensor<4x4xf32>")),
    "permute_repeated_source": ("collective_permute", "duplicate sources not allowed",
                                _op("collective_permute", "source_target_pairs = dense<[[0, 1], [0, 2]]> : "
                                    "tensor<2x2xi64>", T)),
    "permute_repeated_target": ("collective_permute", "duplicate targets not allowed",
                                _op("collective_permute", "source_target_pairs = dense<[[0, 1], [2, 1]]> : "
                                    "tensor<2x2xi64>", T)),
    "permute_negative_id": ("collective_permute", "must be >= 0",
                            _op("collective_permute", "source_target_pairs = dense<[[-1, 0]]> : tensor<1x2xi64>", T)),
    "permute_pairs_shape": ("collective_permute", "of shape (N, 2)",
                            _op("collective_permute", "source_target_pairs = dense<[[0, 1, 2]]> : tensor<1x3xi64>",
                                T)),
    "broadcast_repeated_id": ("collective_broadcast", "replica id #1 seen more than once",
                              _op("collective_broadcast", "replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>", T)),
    "broadcast_negative_id": ("collective_broadcast", "replica_groups values must be positive, but was given -1",
                              _op("collective_broadcast", "replica_groups = dense<[[-1, 0]]> : tensor<1x2xi64>", T)),
    "partition_id_type": ("partition_id", "must be 0D tensor of 32-bit unsigned integer values",
                          "func.func @f() {\n  %0 = \"stablehlo.partition_id\"() : () -> tensor<i32>\n  return\n}\n"),
}

# The spec's constraints MLIR's verifier does not check (it only asks for a multiple): the
# gathered / scattered dimension is the operand's times / divided by the group size (all_gather_c6,
# reduce_scatter_c8), where an empty `replica_groups` means every partition of the module.
SPEC_ONLY = {
    "all_gather_group_size": ("all_gather", "incompatible with return type",
                              _op("all_gather", f"all_gather_dim = 1 : i64, {GROUPS2}", "tensor<4x12xf32>")),
    "reduce_scatter_group_size": ("reduce_scatter", "incompatible with return type",
                                  _op("reduce_scatter", f"{GROUPS2}, scatter_dimension = 0 : i64", "tensor<2x4xf32>",
                                      operand="tensor<8x4xf32>", region=SUM + " ")),
    "all_gather_all_partitions": ("all_gather", "times the group size 4", (
        "module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
        + _op("all_gather", f"all_gather_dim = 1 : i64, {CHANNEL}, replica_groups = dense<> : tensor<0x0xi64>",
              "tensor<4x8xf32>") + "}\n")),
}


def _mlir_error_location(jax_ir, text: str) -> str | None:
    ir, ctx = jax_ir
    with ctx:
        try:
            ir.Module.parse(text).operation.verify()
        except Exception as e:
            m = re.search(r'"-":(\d+):(\d+)', str(e))
            return f"{m.group(1)}:{m.group(2)}" if m else "?"
    return None


@pytest.mark.parametrize("case", sorted(BAD_PROGRAMS))
def test_verifier_rejects_bad_collectives_where_jaxlib_does(jax_ir, case):
    op, message, text = BAD_PROGRAMS[case]
    with pytest.raises(VerifyError) as info:
        lir.parse(text)
    assert info.value.op.name == f"stablehlo.{op}"
    assert message in info.value.message
    where = _mlir_error_location(jax_ir, text)
    assert where is not None, "jaxlib accepts the program"
    assert str(info.value).startswith(f"-:{where}: error: 'stablehlo.{op}' op "), str(info.value)


@pytest.mark.parametrize("case", sorted(SPEC_ONLY))
def test_verifier_checks_the_specs_group_sizes(jax_ir, case):
    op, message, text = SPEC_ONLY[case]
    with pytest.raises(VerifyError) as info:
        lir.parse(text)
    assert info.value.op.name == f"stablehlo.{op}" and message in info.value.message
    line = 3 if text.startswith("module") else 2
    assert str(info.value).startswith(f"-:{line}:8: error: "), str(info.value)
    assert _mlir_error_location(jax_ir, text) is None  # MLIR only asks for a multiple


def test_valid_collectives_verify(jax_ir):
    """Groups of unequal sizes (padded with -1) for all_reduce; a gather over every partition."""
    texts = [_op("all_reduce", "replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>", T, region=SUM + " "),
             "module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
             + _op("all_gather", f"all_gather_dim = 1 : i64, {CHANNEL}, replica_groups = dense<> : tensor<0x0xi64>",
                   "tensor<4x16xf32>") + "}\n"]
    for text in texts:
        lir.parse(text)
        assert _mlir_error_location(jax_ir, text) is None


# Builders against jaxlib ----------------------------------------------------------------------

def tensor(*shape: int, et=f32) -> RankedTensorType:
    return RankedTensorType(tuple(shape), et, None)


def _build_module() -> ModuleOp:
    block = lir.Block([tensor(4, 8)])
    b = Builder(InsertionPoint.at_end(block))
    (a,) = block.args
    groups = [[0, 1], [2, 3]]
    outs = [
        shlo.AllGatherOp.build(b, [a], 1, groups, channel_handle=1, use_global_device_ids=True).results[0],
        shlo.AllReduceOp.build(b, [a], groups, "maximum", channel_handle=1, use_global_device_ids=True).results[0],
        shlo.AllReduceOp.build(b, [a], [[0, 1, 2, 3]], lambda bb, x, y: shlo.add(bb, x, y)).results[0],
        shlo.ReduceScatterOp.build(b, a, 0, groups, "add", channel_handle=2, use_global_device_ids=True).result,
        shlo.AllToAllOp.build(b, [a], 1, 0, 2, groups, channel_handle=3).results[0],
        shlo.CollectivePermuteOp.build(b, a, [(0, 1), (1, 0), (2, 3), (3, 2)], channel_handle=4).result,
        shlo.CollectiveBroadcastOp.build(b, a, groups).result,
        shlo.PartitionIdOp.build(b).result,
        shlo.ReplicaIdOp.build(b).result,
    ]
    b.insert(FuncReturnOp.build(outs))
    fn = FuncOp.build("main", FunctionType((tensor(4, 8),), tuple(v.type for v in outs)), declaration=True)
    fn.regions[0].add_block(block)
    return ModuleOp.build([fn])


def test_builders_infer_types_and_make_what_jaxlib_accepts(jax_ir):
    module = _build_module()
    module.verify()
    results = list(next(o for o in module.walk() if o.name == "func.return").operand_types)
    ui32 = tensor(et=IntegerType(32, IntegerType.UNSIGNED))
    assert results == [tensor(4, 16), tensor(4, 8), tensor(4, 8), tensor(2, 8), tensor(8, 4), tensor(4, 8),
                       tensor(4, 8), ui32, ui32]
    pretty, generic = print_op(module), print_op(module, generic=True)
    assert "stablehlo.partition_id : tensor<ui32>" in pretty
    assert "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>" in generic
    ir, ctx = jax_ir
    with ctx:
        theirs = ir.Module.parse(pretty)
        theirs.operation.verify()
        assert theirs.operation.get_asm() == pretty
        assert theirs.operation.get_asm(print_generic_op_form=True) == generic


def test_builders_reject_bad_arguments():
    block = lir.Block([tensor(5, 4), tensor(4, 4, et=i32)])
    b = Builder(InsertionPoint.at_end(block))
    a, _ = block.args
    with pytest.raises(shlo.ShapeError, match="replica groups must have equal sizes"):
        shlo.AllGatherOp.build(b, [a], 0, [[0, 1], [2]])
    with pytest.raises(shlo.ShapeError, match="expected to be a multiple of split_count 2"):
        shlo.AllToAllOp.build(b, [a], 0, 1, 2, [[0, 1]])
    with pytest.raises(shlo.ShapeError, match="duplicate targets"):
        shlo.CollectivePermuteOp.build(b, a, [(0, 1), (2, 1)])
    with pytest.raises(ValueError, match="no op stablehlo.plus"):
        shlo.AllReduceOp.build(b, [a], [[0, 1]], "plus")


def test_process_group_modes_and_sizes():
    """The spec's modes: no channel reads replica ids; a channel without global ids reads replica
    groups times every partition (all_gather) or partition ids (all_to_all)."""
    module = lir.parse(
        "module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 2 : i32} {\n"
        "func.func @f(%a: tensor<4x4xf32>) {\n"
        f'  %0 = "stablehlo.all_gather"(%a) <{{all_gather_dim = 1 : i64, {GROUPS2}}}> : ({T}) -> tensor<4x8xf32>\n'
        f'  %1 = "stablehlo.all_gather"(%a) <{{all_gather_dim = 1 : i64, {CHANNEL}, {GROUPS2}}}> : ({T}) -> '
        "tensor<4x32xf32>\n"
        f'  %2 = "stablehlo.all_to_all"(%a) <{{{CHANNEL}, concat_dimension = 1 : i64, {GROUPS2}, split_count = 2 : '
        f"i64, split_dimension = 0 : i64}}> : ({T}) -> tensor<2x8xf32>\n"
        f'  %3 = "stablehlo.collective_permute"(%a) <{{source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}}> : '
        f"({T}) -> {T}\n  return\n}}\n}}\n")
    ops = [o for o in module.walk() if o.name.startswith("stablehlo.")]
    assert [o.mode for o in ops] == ["cross_replica", "cross_replica_and_partition", "cross_partition",
                                     "cross_replica"]
    assert [o.group_size() for o in ops[:3]] == [2, 8, 2]
