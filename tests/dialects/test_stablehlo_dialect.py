"""The StableHLO and CHLO dialects against their oracles: JAX's own lowered programs (parse without
unregistered ops, verify, print back byte for byte, and infer exactly the result types JAX wrote),
jaxlib's MLIR (attribute printing, verifier locations, acceptance of what loom builds) and numpy
(constant folding)."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from support.paths import CORPUS as CORPUS_ROOT

import loom.ir as lir
from loom.dialects import chlo
from loom.dialects import stablehlo as shlo
from loom.dialects.builtin import ModuleOp
from loom.dialects.func import FuncOp
from loom.dialects.func import ReturnOp as FuncReturnOp
from loom.ir import Builder, DialectAttr, FunctionType, InsertionPoint, RankedTensorType, VerifyError
from loom.ir.attributes import DenseElementsAttr
from loom.ir.types import ComplexType, IntegerType, bf16, f16, f32, f64, i1, i8, i32, i64
from loom.rewrite.pass_manager import PassManager

CORPUS = CORPUS_ROOT / "generic"
JAX_CORPUS = sorted(CORPUS.glob("*jax*.mlir"))
OWN_DIALECTS = ("stablehlo", "chlo", "func", "builtin")


def tensor(shape, et=f32) -> RankedTensorType:
    return RankedTensorType(tuple(shape), et, None)


# The JAX corpus ----------------------------------------------------------------------------------

def test_jax_corpus_is_present():
    assert len(JAX_CORPUS) >= 150


@pytest.mark.parametrize("path", JAX_CORPUS, ids=lambda p: p.stem)
def test_jax_corpus_parses_registered_verifies_and_round_trips(path: pathlib.Path):
    text = path.read_text()
    dialects = set(re.findall(r'"([a-z_]+)\.[a-z_\-]+"\(', text))
    # Only files that also use dialects loom does not ship (sdy) need unregistered ops.
    foreign = dialects - set(OWN_DIALECTS)
    module = lir.parse(text, allow_unregistered=bool(foreign))  # parse() verifies
    for op in module.walk():
        if op.name.split(".")[0] in ("stablehlo", "chlo"):
            assert op.is_registered, op.name
            # StableHLO's own attributes are structured, never kept as opaque text.
            for key, value in op.properties.items():
                assert not isinstance(value, DialectAttr) or not value.text.startswith(("#stablehlo", "#chlo")), key
    assert lir.print(module, generic=True) == text


def test_unknown_stablehlo_op_is_rejected():
    text = '"builtin.module"() ({\n  %0 = "stablehlo.bogus"() : () -> tensor<f32>\n}) : () -> ()\n'
    with pytest.raises(lir.ParseError, match="unregistered operation 'stablehlo.bogus'"):
        lir.parse(text)


def _exact_or_shape(op: lir.Operation, inferred) -> bool:
    actual = op.result_types
    if isinstance(op, (shlo.DotGeneralOp, shlo.ConvolutionOp, shlo.DotOp)):  # result element type is free
        return [t.shape for t in inferred] == [t.shape for t in actual]
    return list(inferred) == list(actual)


def test_type_inference_reproduces_every_result_type_jax_wrote():
    checked = set()
    for path in JAX_CORPUS:
        module = lir.parse(path.read_text(), allow_unregistered=True)
        for op in module.walk():
            if not isinstance(op, shlo.StableHLOOp):
                continue
            inferred = type(op).infer_result_types(op.operand_types, op.properties, op.regions)
            if inferred is None:
                continue
            assert _exact_or_shape(op, inferred), (path.name, str(op))
            checked.add(op.name)
    # Every family with inference was exercised.
    for name in ("stablehlo.dot_general", "stablehlo.convolution", "stablehlo.gather", "stablehlo.scatter",
                 "stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.sort", "stablehlo.while",
                 "stablehlo.pad", "stablehlo.slice", "stablehlo.transpose", "stablehlo.concatenate",
                 "stablehlo.fft", "stablehlo.compare", "stablehlo.dynamic_slice", "chlo.top_k"):
        assert name in checked, name


def _jax_functions():
    """JAX functions lowering to ops or attribute forms the committed corpus lacks."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def maxpool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")

    f32s = lambda *shape: np.ones(shape, np.float32)  # noqa: E731
    return {
        "maxpool_grad_select_and_scatter": (jax.grad(lambda x: maxpool(x).sum()), [f32s(1, 5, 5, 2)]),
        "conv_grad": (jax.grad(lambda x, w: lax.conv_general_dilated(
            x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")).sum(), argnums=(0, 1)),
            [f32s(2, 8, 8, 3), f32s(3, 3, 3, 4)]),
        "conv_lhs_dilation_groups": (lambda x, w: lax.conv_general_dilated(
            x, w, (1,), [(2, 2)], lhs_dilation=(2,), feature_group_count=2), [f32s(2, 4, 9), f32s(6, 2, 3)]),
        "vmap_gather_batching_dims": (jax.vmap(lambda x, i: x[i]), [f32s(3, 5), np.array([0, 2, 4])]),
        "vmap_scatter_batching_dims": (jax.vmap(lambda x, i, u: x.at[i].set(u)),
                                       [f32s(3, 5), np.array([0, 2, 4]), f32s(3)]),
        "gather_slices": (lambda x, i: x[:, i, 1:3], [f32s(4, 5, 6), np.array([[0, 1], [2, 3]])]),
        "rbg_random_bits": (lambda k: jax.random.bits(jax.random.wrap_key_data(k, impl="rbg"), (3,)),
                            [np.zeros((4,), np.uint32)]),
        "fft_round_trip": (lambda x: jnp.fft.irfft2(jnp.fft.rfft2(x)), [f32s(4, 6)]),
        "switch": (lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), [np.int32(1), f32s(3)]),
        "while_of_tuple": (lambda x: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2), (0, x)),
                           [f32s(2)]),
        "map": (lambda x: lax.map(jnp.sin, x), [f32s(3, 2)]),
        "approx_max_k": (lambda x: lax.approx_max_k(x, 2), [f32s(3, 50)]),
        "bf16_dot_preferred_f32": (lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32),
                                   [np.ones((2, 3), jnp.bfloat16), np.ones((3, 4), jnp.bfloat16)]),
        "triangular_solve": (lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True),
                             [np.eye(3, dtype=np.float32), f32s(3, 2)]),
        "cholesky_eigh": (lambda a: (jnp.linalg.cholesky(a), jnp.linalg.eigh(a)), [np.eye(3, dtype=np.float32)]),
        "round_popcnt_clz": (lambda x, y: (lax.population_count(y) + lax.clz(y),
                                           lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)),
                             [f32s(3), np.ones((3,), np.uint32)]),
    }


@pytest.mark.parametrize("name", ["maxpool_grad_select_and_scatter", "conv_grad", "conv_lhs_dilation_groups",
                                  "vmap_gather_batching_dims", "vmap_scatter_batching_dims", "gather_slices",
                                  "rbg_random_bits", "fft_round_trip", "switch", "while_of_tuple", "map",
                                  "approx_max_k", "bf16_dot_preferred_f32", "triangular_solve", "cholesky_eigh",
                                  "round_popcnt_clz"])
def test_more_jax_programs(jax_ir, name: str):
    import jax
    fn, args = _jax_functions()[name]
    text = jax.jit(fn).lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    module = lir.parse(text, allow_unregistered="sdy." in text)
    assert lir.print(module, generic=True) == text
    for op in module.walk():
        if op.name.split(".")[0] in ("stablehlo", "chlo"):
            assert op.is_registered, op.name
        if isinstance(op, shlo.StableHLOOp):
            inferred = type(op).infer_result_types(op.operand_types, op.properties, op.regions)
            assert inferred is None or _exact_or_shape(op, inferred), str(op)


# Structured attributes ---------------------------------------------------------------------------

ATTRIBUTE_TEXTS = [
    "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
    "rhs_contracting_dimensions = [1]>",
    "#stablehlo.dot<>",
    "#stablehlo.dot<rhs_contracting_dimensions=[0,1], lhs_contracting_dimensions = [1, 2]>",
    "#stablehlo.dot<rhs_batching_dimensions = [0], lhs_batching_dimensions = [1]>",
    "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>",
    "#stablehlo.gather<index_vector_dim = 0>",
    "#stablehlo.gather<>",
    "#stablehlo.gather<start_index_map = [0, 1], offset_dims = [2], index_vector_dim = 1>",
    "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], operand_batching_dims = [2], "
    "start_indices_batching_dims = [0], start_index_map = [0], index_vector_dim = 1>",
    "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], input_batching_dims = [2], "
    "scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>",
    "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>",
    "#stablehlo.scatter<index_vector_dim = 0>",
    "#stablehlo.scatter<index_vector_dim = 2>",
    "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>",
    "#stablehlo.conv<[b,f,0]x[o,i,0]->[b,f,0]>",
    "#stablehlo.conv<[f, b, 1, 0]x[o, i, 1, 0]->[1, 0, b, f]>",
    "#stablehlo.conv<[b, f]x[i, o]->[b, f]>",
    "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], "
    "kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], "
    "output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>",
    "#stablehlo<comparison_direction LT>",
    "#stablehlo<comparison_direction  GE >",
    "#stablehlo<comparison_type TOTALORDER>",
    "#stablehlo<comparison_type NOTYPE>",
    "#stablehlo<precision DEFAULT>",
    "#stablehlo<precision HIGHEST>",
    "#stablehlo<rng_algorithm THREE_FRY>",
    "#stablehlo<rng_distribution NORMAL>",
    "#stablehlo<transpose ADJOINT>",
    "#stablehlo<fft_type IRFFT>",
    "#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>",
    "#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 2, operand_tuple_indices = [0, 3]>",
    "#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>",
    "#stablehlo.result_accuracy<atol = 0.0, rtol = 0.0, ulps = 0, mode = #stablehlo.result_accuracy_mode<DEFAULT>>",
    "#stablehlo.result_accuracy<atol = 1.0e-5, rtol = 0.0, ulps = 2, "
    "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>",
    "#stablehlo.result_accuracy_mode<TOLERANCE>",
    "#chlo<comparison_direction NE>",
    "#chlo<comparison_type FLOAT>",
]


def _loom_attribute(text: str) -> lir.Attribute:
    dialect = chlo if text.startswith("#chlo") else shlo
    attr = dialect.parse_attribute(text)
    assert attr is not None and not isinstance(attr, DialectAttr), text
    return attr


@pytest.mark.parametrize("text", ATTRIBUTE_TEXTS)
def test_attribute_prints_as_mlir_and_round_trips(jax_ir, text: str):
    ir, ctx = jax_ir
    attr = _loom_attribute(text)
    with ctx:
        assert str(attr) == str(ir.Attribute.parse(text))
    assert _loom_attribute(str(attr)) is attr  # interned: re-parsing the printed text gives the same object


def test_attributes_built_from_fields(jax_ir):
    ir, ctx = jax_ir
    built = [
        shlo.DotDimensionNumbers.get(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]),
        shlo.GatherDimensionNumbers.get(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
                                        index_vector_dim=1),
        shlo.ScatterDimensionNumbers.get(update_window_dims=[1], inserted_window_dims=[0],
                                         scatter_dims_to_operand_dims=[0], index_vector_dim=1),
        shlo.ConvDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2)),
        shlo.ResultAccuracy.get(atol=1e-6, mode="TOLERANCE"),
        shlo.enum_attr("comparison_direction", "EQ"),
    ]
    with ctx:
        for attr in built:
            assert str(attr) == str(ir.Attribute.parse(str(attr)))
    dn = shlo.DotDimensionNumbers.get(lhs_contracting_dimensions=(1,), rhs_contracting_dimensions=[0])
    assert dn is built[0] and dn.lhs_contracting_dimensions == (1,) and dn.lhs_batching_dimensions == ()
    assert dn.replace(lhs_batching_dimensions=[0]).lhs_batching_dimensions == (0,)
    with pytest.raises(ValueError):
        shlo.ComparisonDirectionAttr("LESS")


def test_unmodelled_stablehlo_attributes_stay_opaque():
    assert shlo.parse_attribute("#stablehlo.bounds<4, ?>") is None
    assert shlo.parse_attribute("#stablehlo.type_extensions<bounds = [4]>") is None


# Verifier ----------------------------------------------------------------------------------------

def _func(signature: str, body: str) -> str:
    return f"func.func @f{signature} {{\n{body}\n}}\n"


BAD_PROGRAMS = {
    "dot_general_contracting_sizes": ("stablehlo.dot_general", "contracting dimension sizes must match", _func(
        "(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) -> tensor<3x6xf32>",
        '  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = '
        '[1], rhs_contracting_dimensions = [0]>}> : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>\n'
        '  return %0 : tensor<3x6xf32>')),
    "dot_general_batching_count": ("stablehlo.dot_general", "same number of batching dimensions", _func(
        "(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32>",
        '  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = '
        '[0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<2x3x4xf32>, '
        'tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n  return %0 : tensor<2x3x5xf32>')),
    "broadcast_sizes": ("stablehlo.broadcast_in_dim", "is not equal to 1 or the size of result dimension", _func(
        "(%a: tensor<3xf32>) -> tensor<2x4xf32>",
        '  %0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> '
        'tensor<2x4xf32>\n  return %0 : tensor<2x4xf32>')),
    "broadcast_rank": ("stablehlo.broadcast_in_dim", "does not match operand rank", _func(
        "(%a: tensor<3xf32>) -> tensor<2x3xf32>",
        '  %0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<3xf32>) -> '
        'tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>')),
    "broadcast_out_of_range": ("stablehlo.broadcast_in_dim", "out of range", _func(
        "(%a: tensor<3xf32>) -> tensor<2x3xf32>",
        '  %0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = array<i64: 2>}> : (tensor<3xf32>) -> '
        'tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>')),
    "reshape_count": ("stablehlo.reshape", "doesn't match expected number of elements", _func(
        "(%a: tensor<3x4xf32>) -> tensor<5x2xf32>",
        '  %0 = "stablehlo.reshape"(%a) : (tensor<3x4xf32>) -> tensor<5x2xf32>\n  return %0 : tensor<5x2xf32>')),
    "compare_types": ("stablehlo.compare", "compatible", _func(
        "(%a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xi1>",
        '  %0 = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : '
        '(tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>\n  return %0 : tensor<3xi1>')),
    "transpose_not_permutation": ("stablehlo.transpose", "is not a permutation", _func(
        "(%a: tensor<3x4xf32>) -> tensor<4x3xf32>",
        '  %0 = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> '
        'tensor<4x3xf32>\n  return %0 : tensor<4x3xf32>')),
    "transpose_wrong_result": ("stablehlo.transpose", "incompatible with return type", _func(
        "(%a: tensor<3x4xf32>) -> tensor<3x4xf32>",
        '  %0 = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<3x4xf32>) -> '
        'tensor<3x4xf32>\n  return %0 : tensor<3x4xf32>')),
    "slice_bounds": ("stablehlo.slice", "invalid slice of dimension 0", _func(
        "(%a: tensor<4xf32>) -> tensor<3xf32>",
        '  %0 = "stablehlo.slice"(%a) <{limit_indices = array<i64: 5>, start_indices = array<i64: 2>, '
        'strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<3xf32>\n  return %0 : tensor<3xf32>')),
    "concatenate_dims": ("stablehlo.concatenate", "does not match", _func(
        "(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32>",
        '  %0 = "stablehlo.concatenate"(%a, %b) <{dimension = 0 : i64}> : (tensor<2x3xf32>, tensor<2x4xf32>) -> '
        'tensor<4x3xf32>\n  return %0 : tensor<4x3xf32>')),
    "add_types": ("stablehlo.add", "compatible", _func(
        "(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32>",
        '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n'
        '  return %0 : tensor<2xf32>')),
    "select_pred_shape": ("stablehlo.select", "pred must be a scalar or have the shape", _func(
        "(%p: tensor<3xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32>",
        '  %0 = "stablehlo.select"(%p, %a, %b) : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n'
        '  return %0 : tensor<2xf32>')),
    "gather_start_index_map": ("stablehlo.gather", "start_index_map", _func(
        "(%a: tensor<5x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32>",
        '  %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], '
        'collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> '
        ': (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>\n  return %0 : tensor<3x4xf32>')),
    "reduce_body_arity": ("stablehlo.reduce", "must take 2 arguments", _func(
        "(%a: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32>",
        '  %0 = "stablehlo.reduce"(%a, %z) <{dimensions = array<i64: 0>}> ({\n'
        '  ^bb0(%x: tensor<f32>):\n    "stablehlo.return"(%x) : (tensor<f32>) -> ()\n'
        '  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n  return %0 : tensor<f32>')),
    "while_cond_type": ("stablehlo.while", "cond returns", _func(
        "(%a: tensor<i32>) -> tensor<i32>",
        '  %0 = "stablehlo.while"(%a) ({\n  ^bb0(%x: tensor<i32>):\n    "stablehlo.return"(%x) : (tensor<i32>) -> ()\n'
        '  }, {\n  ^bb0(%x: tensor<i32>):\n    "stablehlo.return"(%x) : (tensor<i32>) -> ()\n'
        '  }) : (tensor<i32>) -> tensor<i32>\n  return %0 : tensor<i32>')),
    "pad_negative_size": ("stablehlo.pad", "negative size", _func(
        "(%a: tensor<2xf32>, %v: tensor<f32>) -> tensor<0xf32>",
        '  %0 = "stablehlo.pad"(%a, %v) <{edge_padding_high = array<i64: 0>, edge_padding_low = array<i64: -3>, '
        'interior_padding = array<i64: 0>}> : (tensor<2xf32>, tensor<f32>) -> tensor<0xf32>\n'
        '  return %0 : tensor<0xf32>')),
    "iota_dimension": ("stablehlo.iota", "out of range", _func(
        "() -> tensor<4xi32>",
        '  %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4xi32>\n  return %0 : tensor<4xi32>')),
    "top_k_k": ("chlo.top_k", "k (5)", _func(
        "(%a: tensor<4xf32>) -> tensor<5xf32>",
        '  %0:2 = "chlo.top_k"(%a) <{k = 5 : i64}> : (tensor<4xf32>) -> (tensor<5xf32>, tensor<5xi32>)\n'
        '  return %0#0 : tensor<5xf32>')),
}


def _mlir_error_location(ir, ctx, text: str) -> str | None:
    with ctx:
        try:
            module = ir.Module.parse(text)
            module.operation.verify()
        except Exception as e:  # jaxlib raises MLIRError with "-":line:col in the message
            m = re.search(r'"-":(\d+):(\d+)', str(e))
            return f"{m.group(1)}:{m.group(2)}" if m else "?"
    return None


@pytest.mark.parametrize("case", sorted(BAD_PROGRAMS))
def test_verifier_rejects_bad_stablehlo_at_the_ops_location(jax_ir, case: str):
    op_name, message, text = BAD_PROGRAMS[case]
    with pytest.raises(VerifyError) as info:
        lir.parse(text)
    error = info.value
    assert error.op.name == op_name
    assert message in error.message
    # The location is the op's line and column, where MLIR's own verifier reports it.
    ir, ctx = jax_ir
    where = _mlir_error_location(ir, ctx, text)
    assert where is not None, "MLIR accepts the program"
    assert str(error).startswith(f"-:{where}: error: '{op_name}' op "), str(error)


def test_verifier_messages_name_both_shapes():
    _, _, text = BAD_PROGRAMS["dot_general_contracting_sizes"]
    with pytest.raises(VerifyError, match=r"tensor<3x4xf32>.*tensor<5x6xf32>"):
        lir.parse(text)


# Builders and type inference against jaxlib ------------------------------------------------------

def _module_of(arg_types, build) -> ModuleOp:
    """A module with one function `@main(args) -> results` whose body `build(builder, args)` makes."""
    block = lir.Block(arg_types)
    b = Builder(InsertionPoint.at_end(block))
    results = list(build(b, list(block.args)))
    b.insert(FuncReturnOp.build(results))
    fn = FuncOp.build("main", FunctionType(tuple(arg_types), tuple(v.type for v in results)), declaration=True)
    fn.regions[0].add_block(block)
    module = ModuleOp.build([fn])
    module.verify()
    return module


def _build_many(b: Builder, args):
    x, y, idx, p = args  # f32[2,3,4], f32[2,4,5], i32[3,1], i1[2,3,4]
    out = []
    out.append(shlo.dot_general(b, x, y, shlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[0], rhs_batching_dimensions=[0], lhs_contracting_dimensions=[2],
        rhs_contracting_dimensions=[1]), precision_config=["DEFAULT", "DEFAULT"]))
    out.append(shlo.transpose(b, x, [2, 0, 1]))
    out.append(shlo.slice_(b, x, [0, 1, 0], [2, 3, 4], [1, 1, 2]))
    zero = shlo.constant(b, 0.0, tensor((), f32))
    out.append(shlo.pad(b, x, zero, [1, 0, -1], [0, 2, 0], [0, 1, 1]))
    out.append(shlo.concatenate(b, [x, x], 2))
    out.append(shlo.reverse(b, x, [0, 2]))
    out.append(shlo.compare(b, x, x, "LT"))
    out.append(shlo.select(b, p, x, x))
    out.append(shlo.broadcast_in_dim(b, zero, [2, 3], []))
    out.append(shlo.reshape(b, x, [6, 4]))
    out.append(shlo.convert(b, x, bf16))
    out.append(shlo.bitcast_convert(b, x, tensor((2, 3, 4, 4), i8)))
    out.append(shlo.iota(b, tensor((3, 2), i32), 1))
    out.append(shlo.abs_(b, shlo.complex_(b, x, x)))
    out.append(shlo.is_finite(b, x))
    out.append(shlo.reduce(b, [x], [zero], [1], lambda bb, a: [shlo.add(bb, a[0], a[1])]))
    out.append(shlo.reduce_window(b, [x], [zero], [1, 2, 2], lambda bb, a: [shlo.maximum(bb, a[0], a[1])],
                                  window_strides=[1, 1, 2], padding=[(0, 0), (1, 0), (0, 1)]))
    out.extend(shlo.sort(b, [x, x], 2, lambda bb, a: [shlo.compare(bb, a[0], a[1], "GT")], is_stable=True))
    table = shlo.reshape(b, x, [6, 4])
    out.append(shlo.gather(b, table, idx, shlo.GatherDimensionNumbers.get(
        offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1), [1, 4]))
    updates = shlo.slice_(b, table, [0, 0], [3, 4], [1, 1])
    out.append(shlo.scatter(b, [table], idx, [updates], shlo.ScatterDimensionNumbers.get(
        update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1),
        lambda bb, a: [shlo.add(bb, a[0], a[1])]))
    i0 = shlo.constant(b, 1, tensor((), i32))
    out.append(shlo.dynamic_slice(b, x, [i0, i0, i0], [1, 2, 2]))
    out.append(shlo.dynamic_update_slice(b, x, shlo.dynamic_slice(b, x, [i0, i0, i0], [1, 2, 2]), [i0, i0, i0]))
    out.append(shlo.convolution(b, shlo.transpose(b, x, [0, 2, 1]), shlo.constant(b, 1.0, tensor((2, 3, 5))),
                                shlo.ConvDimensionNumbers(0, 2, (1,), 1, 2, (0,), 0, 2, (1,)), window_strides=[2],
                                padding=[(1, 1)], rhs_dilation=[1]))
    out.extend(chlo.top_k(b, x, 2))
    out.append(shlo.clamp(b, zero, x, shlo.constant(b, 1.0, tensor((), f32))))
    out.append(shlo.get_dimension_size(b, x, 1))
    loop = shlo.while_(b, [i0, x], lambda bb, a: [shlo.compare(bb, a[0], a[0], "LT")],
                       lambda bb, a: [shlo.add(bb, a[0], a[0]), shlo.negate(bb, a[1])])
    out.extend(loop)
    pred = shlo.compare(b, i0, i0, "EQ")
    out.append(shlo.if_(b, pred, [x.type], lambda bb, a: [x], lambda bb, a: [shlo.negate(bb, x)]))
    state = shlo.constant(b, np.arange(2, dtype=np.uint64), tensor((2,), IntegerType(64, "u")))
    out.extend(shlo.rng_bit_generator(b, state, tensor((3,), IntegerType(32, "u")), "THREE_FRY"))
    return out


def test_built_ops_verify_in_loom_and_in_mlir(jax_ir):
    ir, ctx = jax_ir
    args = [tensor((2, 3, 4)), tensor((2, 4, 5)), tensor((3, 1), i32), tensor((2, 3, 4), i1)]
    module = _module_of(args, _build_many)
    text = lir.print(module, generic=True)
    with ctx:
        parsed = ir.Module.parse(text)  # MLIR checks every result type against its own inference
        assert parsed.operation.verify()
        assert parsed.operation.get_asm(print_generic_op_form=True) == text
    assert lir.print(lir.parse(text), generic=True) == text


INFERENCE_CASES = [
    # (builder, argument types, the result types the builder must infer)
    (lambda b, a: [shlo.dot_general(b, a[0], a[1], shlo.DotDimensionNumbers.get(
        lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]))],
     [tensor((3, 4)), tensor((4, 5))], ["tensor<3x5xf32>"]),
    (lambda b, a: [shlo.dot_general(b, a[0], a[1], shlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[0, 2], rhs_batching_dimensions=[1, 2], lhs_contracting_dimensions=[1],
        rhs_contracting_dimensions=[0]))],
     [tensor((2, 3, 4, 6)), tensor((3, 2, 4, 7))], ["tensor<2x4x6x7xf32>"]),
    (lambda b, a: [shlo.transpose(b, a[0], [1, 2, 0])], [tensor((2, 3, 4))], ["tensor<3x4x2xf32>"]),
    (lambda b, a: [shlo.slice_(b, a[0], [1, 0], [7, 3], [2, 3])], [tensor((8, 3))], ["tensor<3x1xf32>"]),
    (lambda b, a: [shlo.pad(b, a[0], a[1], [2], [-1], [3])], [tensor((4,)), tensor(())], ["tensor<14xf32>"]),
    (lambda b, a: [shlo.concatenate(b, [a[0], a[1]], 0)], [tensor((2, 3)), tensor((5, 3))], ["tensor<7x3xf32>"]),
    (lambda b, a: [shlo.compare(b, a[0], a[0], "NE")], [tensor((2,), IntegerType(8, "u"))], ["tensor<2xi1>"]),
    (lambda b, a: [shlo.abs_(b, a[0])], [tensor((2,), ComplexType(f64))], ["tensor<2xf64>"]),
    (lambda b, a: [shlo.complex_(b, a[0], a[0])], [tensor((2,), f32)], ["tensor<2xcomplex<f32>>"]),
    (lambda b, a: [shlo.real(b, a[0])], [tensor((2,), ComplexType(f32))], ["tensor<2xf32>"]),
    (lambda b, a: [shlo.reduce(b, [a[0]], [a[1]], [0, 2], lambda bb, x: [shlo.add(bb, x[0], x[1])])],
     [tensor((2, 3, 4)), tensor(())], ["tensor<3xf32>"]),
    (lambda b, a: [shlo.reduce_window(b, [a[0]], [a[1]], [3, 3], lambda bb, x: [shlo.add(bb, x[0], x[1])],
                                      window_strides=[2, 2], base_dilations=[2, 1], window_dilations=[1, 2],
                                      padding=[(1, 1), (2, 0)])],
     [tensor((5, 7)), tensor(())], ["tensor<5x3xf32>"]),
    (lambda b, a: [shlo.gather(b, a[0], a[1], shlo.GatherDimensionNumbers.get(
        offset_dims=[2], collapsed_slice_dims=[1], operand_batching_dims=[0], start_indices_batching_dims=[0],
        start_index_map=[1], index_vector_dim=2), [1, 1, 5])],
     [tensor((4, 6, 5)), tensor((4, 3, 1), i32)], ["tensor<4x3x5xf32>"]),
    (lambda b, a: [shlo.convolution(b, a[0], a[1], shlo.ConvDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2)),
                                    window_strides=[2, 1], padding=[(1, 1), (0, 0)], lhs_dilation=[1, 2],
                                    rhs_dilation=[2, 1], feature_group_count=2)],
     [tensor((1, 9, 8, 4)), tensor((3, 3, 2, 6))], ["tensor<1x4x13x6xf32>"]),
    (lambda b, a: chlo.top_k(b, a[0], 3), [tensor((2, 5))], ["tensor<2x3xf32>", "tensor<2x3xi32>"]),
    (lambda b, a: [shlo.get_tuple_element(b, shlo.tuple_(b, [a[0], a[1]]), 1)], [tensor(()), tensor((2,), i32)],
     ["tensor<2xi32>"]),
]


@pytest.mark.parametrize("index", range(len(INFERENCE_CASES)))
def test_inferred_types_are_mlirs(jax_ir, index: int):
    build, args, expected = INFERENCE_CASES[index]
    module = _module_of(args, build)
    fn = next(iter(module.body))
    assert [str(t) for t in fn.type.results] == expected
    ir, ctx = jax_ir
    text = lir.print(module, generic=True)
    with ctx:
        assert ir.Module.parse(text).operation.verify()
    # MLIR does check these result types: a different one (here one more dimension) is rejected.
    first = expected[0]
    if all(str(t) != first for t in args):
        wrong = text.replace(first, first.replace("tensor<", "tensor<1x"))
        assert _mlir_error_location(ir, ctx, wrong) is not None


def test_builder_rejects_bad_shapes():
    with pytest.raises(shlo.ShapeError, match="contracting dimension sizes must match"):
        _module_of([tensor((3, 4)), tensor((5, 6))], lambda b, a: [shlo.dot_general(b, a[0], a[1],
                   shlo.DotDimensionNumbers.get(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]))])


# Folding against numpy ---------------------------------------------------------------------------

def _fold(arg_types, build) -> list:
    """Canonicalize a function of constants; the numpy values of its results (None if not folded)."""
    module = _module_of(arg_types, build)
    PassManager.parse("builtin.module(canonicalize)").run(module)
    fn = next(iter(module.body))
    ret = fn.regions[0].blocks[0].last_op
    out = []
    for v in ret.operands:
        op = v.owner_op
        out.append(op.properties["value"].to_numpy() if isinstance(op, shlo.ConstantOp) else v)
    return out


def _const(b, arr: np.ndarray, et):
    return shlo.constant(b, arr, tensor(arr.shape, et))


RNG = np.random.default_rng(0)
INT_TYPES = [(i8, np.int8), (i32, np.int32), (i64, np.int64), (IntegerType(8, "u"), np.uint8),
             (IntegerType(32, "u"), np.uint32)]
FLOAT_TYPES = [(f32, np.float32), (f64, np.float64), (f16, np.float16)]


def _ints(dtype, n=12, nonzero=False) -> np.ndarray:
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    a = RNG.integers(lo, hi, n, endpoint=True).astype(dtype)
    a[:2] = [info.min, info.max]
    if nonzero:
        a[a == 0] = 7
    return a


def _trunc_div(a, b):
    return np.array([(-1 if (x < 0) != (y < 0) else 1) * (abs(int(x)) // abs(int(y))) for x, y in zip(a, b)])


INT_FOLDS = {
    "add": (shlo.add, lambda a, b: (a.astype(object) + b.astype(object))),
    "subtract": (shlo.subtract, lambda a, b: (a.astype(object) - b.astype(object))),
    "multiply": (shlo.multiply, lambda a, b: (a.astype(object) * b.astype(object))),
    "maximum": (shlo.maximum, np.maximum),
    "minimum": (shlo.minimum, np.minimum),
    "and": (shlo.and_, np.bitwise_and),
    "or": (shlo.or_, np.bitwise_or),
    "xor": (shlo.xor, np.bitwise_xor),
}


def _wrap(values, dtype) -> np.ndarray:
    bits = np.dtype(dtype).itemsize * 8
    t = IntegerType(bits, "u" if np.dtype(dtype).kind == "u" else "")
    return np.array([t.normalize(int(v)) for v in np.asarray(values).reshape(-1)], dtype=object).astype(dtype)


@pytest.mark.parametrize("et,dtype", INT_TYPES, ids=lambda x: str(x))
@pytest.mark.parametrize("name", sorted(INT_FOLDS))
def test_integer_folds_match_numpy(name, et, dtype):
    fn, ref = INT_FOLDS[name]
    a, b = _ints(dtype), _ints(dtype)
    (got,) = _fold([], lambda bb, _: [fn(bb, _const(bb, a, et), _const(bb, b, et))])
    np.testing.assert_array_equal(got, _wrap(ref(a, b), dtype))


@pytest.mark.parametrize("et,dtype", [(i8, np.int8), (i32, np.int32), (IntegerType(16, "u"), np.uint16)],
                         ids=lambda x: str(x))
def test_integer_division_truncates_and_remainder_takes_the_dividends_sign(et, dtype):
    a, b = _ints(dtype, nonzero=True), _ints(dtype, nonzero=True)
    if np.dtype(dtype).kind == "i":  # INT_MIN / -1 overflows: not folded, so keep it out
        b[(a == np.iinfo(dtype).min) & (b == -1)] = 3
    q, r = _fold([], lambda bb, _: [shlo.divide(bb, _const(bb, a, et), _const(bb, b, et)),
                                    shlo.remainder(bb, _const(bb, a, et), _const(bb, b, et))])
    np.testing.assert_array_equal(q, _wrap(_trunc_div(a, b), dtype))
    np.testing.assert_array_equal(r, np.fmod(a, b))


def test_division_by_zero_is_not_folded():
    a, b = np.array([1, 2], np.int32), np.array([1, 0], np.int32)
    (got,) = _fold([], lambda bb, _: [shlo.divide(bb, _const(bb, a, i32), _const(bb, b, i32))])
    assert isinstance(got, lir.Value)


@pytest.mark.parametrize("et,dtype", [(i8, np.int8), (IntegerType(32, "u"), np.uint32)], ids=lambda x: str(x))
def test_shift_folds(et, dtype):
    bits = np.dtype(dtype).itemsize * 8
    a = _ints(dtype)
    s = np.array([0, 1, 3, bits - 1, bits, bits + 5, 2, 1, 0, bits * 3, 4, 5], dtype=dtype)
    left, logical, arith = _fold([], lambda bb, _: [
        shlo.shift_left(bb, _const(bb, a, et), _const(bb, s, et)),
        shlo.shift_right_logical(bb, _const(bb, a, et), _const(bb, s, et)),
        shlo.shift_right_arithmetic(bb, _const(bb, a, et), _const(bb, s, et))])
    unsigned = a.astype(f"u{bits // 8}").astype(object)
    signed = a.astype(f"i{bits // 8}").astype(object)
    np.testing.assert_array_equal(left, _wrap([x << int(k) if k < bits else 0 for x, k in zip(unsigned, s)], dtype))
    np.testing.assert_array_equal(logical, _wrap([x >> int(k) if k < bits else 0 for x, k in zip(unsigned, s)], dtype))
    np.testing.assert_array_equal(arith, _wrap([x >> min(int(k), bits - 1) for x, k in zip(signed, s)], dtype))


@pytest.mark.parametrize("et,dtype", FLOAT_TYPES, ids=lambda x: str(x))
def test_float_folds_match_numpy(et, dtype):
    a = RNG.normal(size=10).astype(dtype)
    b = RNG.normal(size=10).astype(dtype)
    a[0], b[1] = np.inf, np.nan
    names = ("add", "subtract", "multiply", "divide", "remainder", "sqrt", "floor", "ceil", "round_nearest_even",
             "negate")
    results = _fold([], lambda bb, _: [
        shlo.add(bb, _const(bb, a, et), _const(bb, b, et)),
        shlo.subtract(bb, _const(bb, a, et), _const(bb, b, et)),
        shlo.multiply(bb, _const(bb, a, et), _const(bb, b, et)),
        shlo.divide(bb, _const(bb, a, et), _const(bb, b, et)),
        shlo.remainder(bb, _const(bb, a, et), _const(bb, b, et)),
        shlo.sqrt(bb, _const(bb, np.abs(a), et)),
        shlo.floor(bb, _const(bb, a, et)),
        shlo.ceil(bb, _const(bb, a, et)),
        shlo.round_nearest_even(bb, _const(bb, a, et)),
        shlo.negate(bb, _const(bb, a, et))])
    with np.errstate(all="ignore"):
        expected = [a + b, a - b, a * b, a / b, np.fmod(a, b), np.sqrt(np.abs(a)), np.floor(a), np.ceil(a),
                    np.rint(a), -a]
    for name, got, want in zip(names, results, expected):
        np.testing.assert_array_equal(got, want.astype(dtype), err_msg=name)


def test_compare_and_convert_folds_match_numpy():
    a = np.array([1.5, -2.0, np.nan, 0.0, 3.0, np.inf], np.float32)
    b = np.array([1.5, 2.0, 1.0, -0.0, np.nan, 1.0], np.float32)
    ints = np.array([3, -4, 300, 0, -129, 127], np.int32)
    results = _fold([], lambda bb, _: [
        *(shlo.compare(bb, _const(bb, a, f32), _const(bb, b, f32), d) for d in ("EQ", "NE", "LT", "LE", "GT", "GE")),
        shlo.convert(bb, _const(bb, ints, i32), i8),
        shlo.convert(bb, _const(bb, ints, i32), f32),
        shlo.convert(bb, _const(bb, np.array([2.75, -2.75, 1e3], np.float64), f64), i32),
        shlo.convert(bb, _const(bb, a, f32), i1),
    ])
    expected = [a == b, a != b, a < b, a <= b, a > b, a >= b, ints.astype(np.int8), ints.astype(np.float32),
                np.array([2, -2, 1000], np.int32), a != 0]
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


def test_inexact_or_undefined_conversions_are_not_folded():
    results = _fold([], lambda bb, _: [
        shlo.convert(bb, _const(bb, np.array([np.nan], np.float32), f32), i32),  # NaN to integer
        shlo.convert(bb, _const(bb, np.array([1e10], np.float64), f64), i32),  # out of range
        shlo.convert(bb, _const(bb, np.array([0.1], np.float64), f64), f32),  # rounds
        shlo.convert(bb, _const(bb, np.array([2 ** 24 + 1], np.int32), i32), f32),  # rounds
    ])
    assert all(isinstance(v, lir.Value) for v in results)


def test_identity_and_no_op_folds():
    x_type = tensor((2, 3), f32)

    def build(b, args):
        x, n = args
        zero_i = shlo.constant(b, 0, tensor((4,), i32))
        one = shlo.constant(b, 1.0, x_type)
        neg_zero = shlo.constant(b, -0.0, x_type)
        return [
            shlo.multiply(b, x, one),
            shlo.multiply(b, one, x),  # the identity on either side folds
            shlo.add(b, x, neg_zero),
            shlo.add(b, n, zero_i),
            shlo.reshape(b, x, [2, 3]),
            shlo.transpose(b, x, [0, 1]),
            shlo.broadcast_in_dim(b, x, [2, 3], [0, 1]),
            shlo.convert(b, x, f32),
            shlo.slice_(b, x, [0, 0], [2, 3], [1, 1]),
        ]

    results = _fold([x_type, tensor((4,), i32)], build)
    assert all(isinstance(v, lir.BlockArgument) for v in results)
    assert [v.index for v in results] == [0, 0, 0, 1, 0, 0, 0, 0, 0]


def test_reshape_round_trips_fold_to_their_source():
    x_type = tensor((4, 1), f32)

    def build(b, args):
        (x,) = args
        flat = shlo.reshape(b, x, [4])
        back = shlo.broadcast_in_dim(b, flat, [4, 1], [0])  # only inserts a unit dim: a reshape
        return [back, shlo.reshape(b, shlo.reshape(b, back, [2, 2]), [4, 1]),
                shlo.broadcast_in_dim(b, flat, [4, 3], [0]),  # a real broadcast: kept
                shlo.reshape(b, flat, [1, 4])]  # another shape: kept

    results = _fold([x_type], build)
    assert [isinstance(v, lir.BlockArgument) for v in results] == [True, True, False, False]
    assert results[2].op.name == "stablehlo.broadcast_in_dim" and results[3].op.name == "stablehlo.reshape"


def test_x_plus_positive_zero_is_kept_for_floats():
    (got,) = _fold([tensor((2,), f32)], lambda b, a: [shlo.add(b, a[0], shlo.constant(b, 0.0, tensor((2,), f32)))])
    assert isinstance(got, lir.OpResult) and got.op.name == "stablehlo.add"


def test_slice_reshape_transpose_broadcast_of_constants_fold():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    results = _fold([], lambda b, _: [
        shlo.slice_(b, _const(b, a, i32), [1, 0], [3, 4], [1, 2]),
        shlo.reshape(b, _const(b, a, i32), [4, 3]),
        shlo.transpose(b, _const(b, a, i32), [1, 0]),
        shlo.broadcast_in_dim(b, shlo.constant(b, 5, tensor((), i32)), [2, 2], []),
        shlo.concatenate(b, [_const(b, a, i32), _const(b, a, i32)], 0),
    ])
    for got, want in zip(results, [a[1:3, 0:4:2], a.reshape(4, 3), a.T, np.full((2, 2), 5), np.concatenate([a, a])]):
        np.testing.assert_array_equal(got, want)


def test_large_constants_are_not_folded():
    a = np.arange(100, dtype=np.float32)
    (got,) = _fold([], lambda b, _: [shlo.add(b, _const(b, a, f32), _const(b, a, f32))])
    assert isinstance(got, lir.OpResult) and got.op.name == "stablehlo.add"


def test_materialize_constant_makes_stablehlo_constants():
    attr = DenseElementsAttr.get(np.array([1, 2], np.int32), tensor((2,), i32))
    block = lir.Block()
    op = shlo.materialize_constant(Builder(InsertionPoint.at_end(block)), attr, attr.type, lir.UNKNOWN_LOC)
    assert isinstance(op, shlo.ConstantOp) and op.properties["value"] is attr and op.parent is block
    assert shlo.materialize_constant(Builder(InsertionPoint.at_end(block)), attr, tensor((2,), i64),
                                     lir.UNKNOWN_LOC) is None


# Traits ------------------------------------------------------------------------------------------

def test_traits():
    from loom.ir.opdef import Commutative, IsolatedFromAbove, Pure, ReturnLike, Terminator
    # Commutative in semantics only: StableHLO's ODS gives no Commutative trait (see the
    # canonicalize/cse oracle test below).
    for cls in (shlo.AddOp, shlo.MulOp, shlo.MaxOp, shlo.MinOp, shlo.AndOp, shlo.OrOp, shlo.XorOp):
        assert cls.commutative and not cls.has_trait(Commutative) and cls.has_trait(Pure)
    for cls in (shlo.SubtractOp, shlo.DivOp, shlo.PowOp):
        assert not cls.commutative
    assert shlo.ReturnOp.has_trait(Terminator) and shlo.ReturnOp.has_trait(ReturnLike)
    # As in StableHLO's ODS (and jaxlib, which accepts captures in these bodies), no region op is
    # isolated from above.
    for cls in (shlo.ReduceOp, shlo.SortOp, shlo.ScatterOp, shlo.ReduceWindowOp, shlo.SelectAndScatterOp,
                shlo.WhileOp, shlo.IfOp, shlo.CaseOp):
        assert not cls.has_trait(IsolatedFromAbove)
    assert not shlo.CustomCallOp.has_trait(Pure)


def test_canonicalize_and_cse_keep_operand_order_like_mlir():
    """Upstream neither moves constants right nor merges swapped operands of stablehlo ops."""
    mlir = pytest.importorskip("jax._src.interpreters.mlir")
    from jax._src.lib.mlir import ir, passmanager

    from loom.rewrite import PassManager
    text = """func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.add %b, %a : tensor<2xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<2xf32>
  %3 = stablehlo.constant dense<2.0> : tensor<2xf32>
  %4 = stablehlo.add %3, %a : tensor<2xf32>
  return %2, %4 : tensor<2xf32>, tensor<2xf32>
}"""
    with mlir.make_ir_context():
        generic = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
        m = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(m.operation)
        expected = m.operation.get_asm(print_generic_op_form=True)
    module = lir.parse(generic)
    PassManager.parse("builtin.module(canonicalize,cse)").run(module)
    assert lir.print(module, generic=True) == expected


def test_chlo_top_k_is_stable_attribute():
    """Newer JAX marks chlo.top_k `is_stable`; loom keeps the attribute through print and parse
    and its kernels put the smaller index first among equal values, as a stable top-k must."""
    text = _func("(%a: tensor<6xi32>) -> (tensor<4xi32>, tensor<4xi32>)",
                 '  %0:2 = "chlo.top_k"(%a) <{is_stable = true, k = 4 : i64}> : (tensor<6xi32>) -> '
                 '(tensor<4xi32>, tensor<4xi32>)\n  return %0#0, %0#1 : tensor<4xi32>, tensor<4xi32>')
    module = lir.parse(text)
    module.verify()
    printed = lir.print(module, generic=True)
    assert "is_stable = true" in printed and lir.print(lir.parse(printed), generic=True) == printed
    x = np.array([3, 7, 3, 7, 1, 3], np.int32)
    want = np.argsort(-x, kind="stable")[:4]  # equal values in index order
    import loom
    for backend in ("numpy", "torch"):
        if backend == "torch":
            pytest.importorskip("torch")
        values, indices = loom.compile(module, entry="f", backend=backend)(x)
        values = values if isinstance(values, np.ndarray) else values.cpu().numpy()
        indices = indices if isinstance(indices, np.ndarray) else indices.cpu().numpy()
        np.testing.assert_array_equal(indices, want)
        np.testing.assert_array_equal(values, x[want])
    with pytest.raises(VerifyError, match="is_stable"):
        lir.parse(text.replace("is_stable = true", "is_stable = 1 : i64")).verify()
