"""Generate tests/corpus/stablehlo: the pretty (custom) form of every StableHLO and CHLO op as
jaxlib's MLIR prints it, next to the generic form of that text.

Sources: every module of tests/corpus/generic that holds StableHLO or CHLO ops (functions lowered
by JAX, plus snippets), and the snippets below for the ops JAX does not emit, written in the generic
form. Each is parsed by jaxlib with the stablehlo and chlo dialects registered and printed in the
default (pretty) form, `NNN_name.mlir`; that text is parsed again and printed with
`print_generic_op_form=True`, `NNN_name.generic.mlir`.
Run from the repository root::

    .venv/bin/python tests/corpus/generate_stablehlo.py

`render()` returns the files without writing them (the tests compare it with the folder).
"""

# ruff: noqa: E501

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import re
import shutil
from pathlib import Path

from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir

CORPUS = Path(__file__).resolve().parent
OUT = CORPUS / "stablehlo"


def _fn(name: str, args: str, body: str, results: str) -> str:
    return f'"func.func"() <{{function_type = ({args}) -> ({results}), sym_name = "{name}"}}> ({{\n{body}\n}}) : () -> ()\n'


# Ops JAX does not emit (or not in the generic corpus), in the generic form. Each entry is
# (name, function signature argument types, body); the body returns nothing unless it says so.
T = "tensor<4xf32>"
SNIPPETS: dict[str, str] = {}


def snippet(name: str, args: list[str], body: str) -> None:
    arg_list = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    SNIPPETS[name] = f"func.func @main({arg_list}) {{\n{body.strip()}\n  \"func.return\"() : () -> ()\n}}\n"


def _unary(dialect: str, ops: list[str], t: str = T, out: str | None = None) -> str:
    return "\n".join(f'  %{i} = "{dialect}.{op}"(%arg0) : ({t}) -> {out or t}' for i, op in enumerate(ops))


def _binary(dialect: str, ops: list[str], t: str = T, out: str | None = None) -> str:
    return "\n".join(f'  %{i} = "{dialect}.{op}"(%arg0, %arg1) : ({t}, {t}) -> {out or t}' for i, op in enumerate(ops))


snippet("stablehlo_unary_more", [T], _unary("stablehlo", ["logistic", "round_nearest_afz", "cbrt", "tan"]) + """
  %9 = "stablehlo.exponential"(%arg0) <{result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}> : (tensor<4xf32>) -> tensor<4xf32>
  %10 = "stablehlo.log"(%arg0) <{result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>}> : (tensor<4xf32>) -> tensor<4xf32>
  %11 = "stablehlo.sine"(%arg0) {tag = 1 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  %12 = "stablehlo.abs"(%arg0) : (tensor<4xf32>) -> tensor<?xf32>""")
snippet("stablehlo_binary_mixed_types", [T, "tensor<?xf32>"], """
  %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  %1 = "stablehlo.multiply"(%arg1, %arg1) {tag} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>""")
snippet("stablehlo_dot", ["tensor<3x4xf32>", "tensor<4x5xf32>"], """
  %0 = "stablehlo.dot"(%arg0, %arg1) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "stablehlo.dot"(%arg0, %arg1) <{precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision HIGHEST>]}> : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>""")
snippet("stablehlo_dot_general_plain", ["tensor<2x3x4xf32>", "tensor<2x4x5xf32>"], """
  %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGH>]}> {tag = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>""")
snippet("stablehlo_map", [T, T], """
  %0 = "stablehlo.map"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%1) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>""")
snippet("stablehlo_if", ["tensor<i1>", T], """
  %0 = "stablehlo.if"(%arg0) ({
    "stablehlo.return"(%arg1) : (tensor<4xf32>) -> ()
  }, {
    %1 = "stablehlo.negate"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.return"(%1) : (tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>""")
snippet("stablehlo_tuples_tokens", [T, "tensor<i32>", "!stablehlo.token"], """
  %0 = "stablehlo.tuple"(%arg0, %arg1) : (tensor<4xf32>, tensor<i32>) -> tuple<tensor<4xf32>, tensor<i32>>
  %1 = "stablehlo.get_tuple_element"(%0) <{index = 1 : i32}> : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<i32>
  %2 = "stablehlo.create_token"() : () -> !stablehlo.token
  %3 = "stablehlo.after_all"(%2, %arg2) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
  %4 = "stablehlo.after_all"() : () -> !stablehlo.token
  %5 = "stablehlo.tuple"() : () -> tuple<>""")
snippet("stablehlo_rng", ["tensor<f32>", "tensor<f32>", "tensor<2xi64>"], """
  %0 = "stablehlo.rng"(%arg0, %arg1, %arg2) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}> : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>
  %1 = "stablehlo.rng"(%arg0, %arg1, %arg2) <{rng_distribution = #stablehlo<rng_distribution NORMAL>}> : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>""")
snippet("stablehlo_composite", [T], """
  %0 = "stablehlo.composite"(%arg0) <{composite_attributes = {k = 1 : i64}, decomposition = @decomp, name = "my.op", version = 1 : i32}> : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.composite"(%arg0) <{decomposition = @decomp, name = "my.op"}> : (tensor<4xf32>) -> tensor<4xf32>""")
SNIPPETS["stablehlo_composite"] += 'func.func private @decomp(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  "func.return"(%arg0) : (tensor<4xf32>) -> ()\n}\n'
snippet("stablehlo_broadcast", ["tensor<3xf32>"], """
  %0 = "stablehlo.broadcast"(%arg0) <{broadcast_sizes = array<i64: 2, 4>}> : (tensor<3xf32>) -> tensor<2x4x3xf32>""")
snippet("stablehlo_linalg", ["tensor<3x3xf32>", "tensor<3x2xf32>"], """
  %0 = "stablehlo.cholesky"(%arg0) <{lower = true}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = "stablehlo.cholesky"(%arg0) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>""")
snippet("stablehlo_select_and_scatter", ["tensor<4x4xf32>", "tensor<2x2xf32>", "tensor<f32>"], """
  %0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %arg2) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%1) : (tensor<f32>) -> ()
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>""")
_SUM = """({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  })"""
snippet("stablehlo_collectives", ["tensor<4x4xf32>", "!stablehlo.token"], f"""
  %0 = "stablehlo.all_gather"(%arg0) <{{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}> : (tensor<4x4xf32>) -> tensor<4x8xf32>
  %1 = "stablehlo.all_reduce"(%arg0) <{{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}> {_SUM} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = "stablehlo.all_to_all"(%arg0) <{{concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}}> : (tensor<4x4xf32>) -> tensor<8x2xf32>
  %3 = "stablehlo.collective_broadcast"(%arg0) <{{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = "stablehlo.collective_permute"(%arg0) <{{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = "stablehlo.reduce_scatter"(%arg0) <{{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64}}> {_SUM} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  %6 = "stablehlo.replica_id"() : () -> tensor<ui32>
  %7 = "stablehlo.partition_id"() : () -> tensor<ui32>
  %8:2 = "stablehlo.infeed"(%arg1) <{{infeed_config = "", layout = [[1, 0]]}}> : (!stablehlo.token) -> (tensor<3x3xi32>, !stablehlo.token)
  %9 = "stablehlo.outfeed"(%arg0, %arg1) <{{outfeed_config = ""}}> : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token
  %10 = "stablehlo.send"(%arg0, %arg1) <{{channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>, is_host_transfer = true}}> : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token
  %11:2 = "stablehlo.recv"(%arg1) <{{channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>, is_host_transfer = true}}> : (!stablehlo.token) -> (tensor<4x4xf32>, !stablehlo.token)
  %12 = "stablehlo.cross-replica-sum"(%arg0) <{{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}> : (tensor<4x4xf32>) -> tensor<4x4xf32>""")
snippet("stablehlo_batch_norm", ["tensor<2x3xf32>", "tensor<3xf32>"], """
  %0:3 = "stablehlo.batch_norm_training"(%arg0, %arg1, %arg1) <{epsilon = 1.000000e-03 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %1 = "stablehlo.batch_norm_inference"(%arg0, %arg1, %arg1, %arg1, %arg1) <{epsilon = 1.000000e-03 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2:3 = "stablehlo.batch_norm_grad"(%arg0, %arg1, %arg1, %arg1, %arg0) <{epsilon = 1.000000e-03 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)""")
snippet("stablehlo_dynamic_ops", ["tensor<?x4xf32>", "tensor<2xi64>", "tensor<f32>", "tensor<i32>"], """
  %0 = "stablehlo.dynamic_pad"(%arg0, %arg2, %arg1, %arg1, %arg1) : (tensor<?x4xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = "stablehlo.real_dynamic_slice"(%arg0, %arg1, %arg1, %arg1) : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  %2 = "stablehlo.set_dimension_size"(%arg0, %arg3) <{dimension = 0 : i64}> : (tensor<?x4xf32>, tensor<i32>) -> tensor<?x4xf32>
  %3 = "stablehlo.dynamic_broadcast_in_dim"(%arg0, %arg1) <{broadcast_dimensions = array<i64: 0, 1>, known_expanding_dimensions = array<i64: 0>, known_nonexpanding_dimensions = array<i64: 1>}> : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>""")
snippet("stablehlo_dynamic_gather_conv", ["tensor<3x4xf32>", "tensor<2x1xi32>", "tensor<2xi32>", "tensor<1x4x4x1xf32>", "tensor<3x3x1x1xf32>", "tensor<2x2xi32>"], """
  %0 = "stablehlo.dynamic_gather"(%arg0, %arg1, %arg2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>}> : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x4xf32>
  %1 = "stablehlo.dynamic_conv"(%arg3, %arg4, %arg5) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64}> : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi32>) -> tensor<1x4x4x1xf32>""")
snippet("stablehlo_legacy", ["tensor<3x4xf32>", "tensor<4x5xf32>", "tensor<2xi32>"], """
  %0 = "stablehlo.einsum"(%arg0, %arg1) <{einsum_config = "ab,bc->ac"}> : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "stablehlo.unary_einsum"(%arg0) <{einsum_config = "ab->a"}> : (tensor<3x4xf32>) -> tensor<3xf32>
  %2 = "stablehlo.torch_index_select"(%arg0, %arg2) <{batch_dims = 0 : i64, dim = 0 : i64}> : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>""")
snippet("stablehlo_async", ["tensor<4xf32>"], """
  %0 = "stablehlo.async_start"(%arg0) ({
  ^bb0(%a: tensor<4xf32>):
    %n = "stablehlo.collective_permute"(%a) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.return"(%n) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>
  %1 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>""")
snippet("stablehlo_custom_call_forms", [T], """
  %0 = "stablehlo.custom_call"(%arg0) <{call_target_name = "foo"}> : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.custom_call"(%arg0) <{api_version = 4 : i32, backend_config = {a = 1 : i64}, call_target_name = "bar", has_side_effect = true}> : (tensor<4xf32>) -> tensor<4xf32>
  "stablehlo.custom_call"() <{call_target_name = "baz", called_computations = [@foo]}> : () -> ()""")
snippet("stablehlo_compare_types", ["tensor<4xi32>", "tensor<4xf32>"], """
  %0 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>""")
snippet("stablehlo_edge_forms", ["tensor<1x4x1xf32>"], """
  "stablehlo.optimization_barrier"() : () -> ()
  %0 = "stablehlo.custom_call"() <{call_target_name = "x", has_side_effect = true}> : () -> tensor<4xf32>
  %1 = "stablehlo.concatenate"(%0) <{dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  %c = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
  %2 = "stablehlo.dynamic_slice"(%0, %c) <{slice_sizes = array<i64: 2>}> : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
  %4 = "stablehlo.slice"(%0) <{start_indices = array<i64: 0>, limit_indices = array<i64: 4>, strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "stablehlo.convolution"(%arg0, %arg0) <{dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, batch_group_count = 1 : i64, feature_group_count = 1 : i64}> : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x1x1xf32>
  %6 = "stablehlo.compare"(%0, %0) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type NOTYPE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %7 = "stablehlo.cholesky"(%5) <{lower = false}> : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %8 = "stablehlo.dot_general"(%0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, algorithm = #stablehlo.dot_algorithm<lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %9 = "stablehlo.custom_call"(%0) <{call_target_name = "not-valid id", backend_config = "x"}> : (tensor<4xf32>) -> tensor<4xf32>""")
snippet("stablehlo_edge_forms_regions", ["tensor<4xf32>", "tensor<f32>"], """
  %0 = "stablehlo.while"(%arg1) ({
  ^bb0(%a: tensor<f32>):
    %c = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    "stablehlo.return"(%a) : (tensor<f32>) -> ()
  }) {tag = "w"} : (tensor<f32>) -> tensor<f32>
  "stablehlo.while"() ({
    %t = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    "stablehlo.return"(%t) : (tensor<i1>) -> ()
  }, {
    "stablehlo.return"() : () -> ()
  }) : () -> ()
  %1 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {tag = 1 : i32} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %2 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%b, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %3 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.atan2"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %4 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> {tag} : () -> tensor<4xf32>
  %5 = "stablehlo.constant"() <{value = dense<[true, false]> : tensor<2xi1>}> {tag} : () -> tensor<2xi1>
  %6 = "stablehlo.constant"() <{value = dense<(1.0, 2.0)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
  %7 = "stablehlo.convert"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64>}> : (tensor<4xf32>) -> tensor<4xf32>
  %9 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4xf32>
  %10 = "stablehlo.bitcast_convert"(%arg0) : (tensor<4xf32>) -> tensor<4xui32>
  %11:2 = "stablehlo.rng_bit_generator"(%10) <{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}> : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2xui32>)""")
snippet("chlo_unary_more", [T], _unary("chlo", ["tan", "bessel_i1e", "conj", "erf", "lgamma"]) + "\n"
        + _unary("chlo", ["is_inf", "is_neg_inf", "is_pos_inf"], out="tensor<4xi1>").replace("%0 =", "%10 =").replace("%1 =", "%11 =").replace("%2 =", "%12 ="))
snippet("chlo_asin_acos_kernel", ["tensor<4xcomplex<f32>>"], _unary("chlo", ["_asin_acos_kernel"], t="tensor<4xcomplex<f32>>"))
snippet("chlo_binary", [T, T], _binary("chlo", ["polygamma", "zeta", "next_after"]))
snippet("chlo_mulhi", ["tensor<4xi32>", "tensor<4xi32>"], _binary("chlo", ["mulhi"], t="tensor<4xi32>"))
_BCAST = ["add", "atan2", "divide", "maximum", "minimum", "multiply", "next_after", "polygamma", "power",
          "remainder", "subtract", "zeta"]
snippet("chlo_broadcast_float", ["tensor<4xf32>", "tensor<1xf32>"], "\n".join(
    f'  %{i} = "chlo.broadcast_{op}"(%arg0, %arg1) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>' for i, op in enumerate(_BCAST)) + """
  %20 = "chlo.broadcast_complex"(%arg0, %arg1) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>
  %21 = "chlo.broadcast_compare"(%arg0, %arg1) <{comparison_direction = #chlo<comparison_direction LT>}> : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %22 = "chlo.broadcast_compare"(%arg0, %arg1) <{compare_type = #chlo<comparison_type FLOAT>, comparison_direction = #chlo<comparison_direction EQ>}> : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %23 = "chlo.broadcast_add"(%arg0, %arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>""")
snippet("chlo_broadcast_int", ["tensor<2x4xi32>", "tensor<4xi32>", "tensor<2x4xi1>"], "\n".join(
    f'  %{i} = "chlo.broadcast_{op}"(%arg0, %arg1) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>' for i, op in enumerate(
        ["and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical"])) + """
  %10 = "chlo.broadcast_select"(%arg2, %arg0, %arg1) : (tensor<2x4xi1>, tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>""")
snippet("chlo_constants", [T], """
  %0 = "chlo.constant"() <{value = dense<1.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
  %1 = "chlo.constant_like"(%arg0) <{value = 2.000000e+00 : f32}> : (tensor<4xf32>) -> tensor<4xf32>""")
snippet("chlo_top_k", ["tensor<3x8xf32>"], """
  %0:2 = "chlo.top_k"(%arg0) <{k = 3 : i64}> : (tensor<3x8xf32>) -> (tensor<3x3xf32>, tensor<3x3xi32>)""")
snippet("chlo_ragged_dot", ["tensor<4x3xf32>", "tensor<2x3x5xf32>", "tensor<2xi64>"], """
  %0 = "chlo.ragged_dot"(%arg0, %arg1, %arg2) <{precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>], ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}> : (tensor<4x3xf32>, tensor<2x3x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>""")
snippet("chlo_scan", ["tensor<4xf32>", "tensor<f32>"], """
  %0:2 = "chlo.scan"(%arg0, %arg1) <{dimension = 0 : i64, is_reverse = false, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %c: tensor<f32>):
    %s = "stablehlo.add"(%a, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s, %s) : (tensor<f32>, tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)""")


def _context() -> ir.Context:
    context = jax_mlir.make_ir_context()
    context.allow_unregistered_dialects = True
    return context


def _sources() -> list[tuple[str, str]]:
    out = []
    for path in sorted((CORPUS / "generic").glob("*.mlir")):
        text = path.read_text()
        # Unsharded modules only: sharded programs (sdy) are the corpus of generate_sharded.py.
        if ('"stablehlo.' in text or '"chlo.' in text) and '"sdy.' not in text:
            out.append((re.sub(r"^\d+_", "", path.stem), text))
    out.extend(SNIPPETS.items())
    return out


def render() -> dict[str, str]:
    """File name -> text, for every module; raises on a snippet jaxlib rejects."""
    files: dict[str, str] = {}
    with _context():
        for i, (name, text) in enumerate(_sources(), 1):
            try:
                module = ir.Module.parse(text)
            except Exception as e:
                raise ValueError(f"{name}: {e}") from None
            stem = f"{i:03d}_{name}"
            pretty = module.operation.get_asm()
            # The generic form of the pretty text read back (what the pretty text means: it drops,
            # e.g., empty `arg_attrs`), which must print the same pretty text again.
            again = ir.Module.parse(pretty)
            if again.operation.get_asm() != pretty:
                raise ValueError(f"{name}: the pretty form is not a fixed point")
            files[f"{stem}.mlir"] = pretty
            files[f"{stem}.generic.mlir"] = again.operation.get_asm(print_generic_op_form=True)
    return files


def main() -> None:
    files = render()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    for name, text in files.items():
        (OUT / name).write_text(text)
    print(f"wrote {len(files)} files to {OUT}")


if __name__ == "__main__":
    main()
