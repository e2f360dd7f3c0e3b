"""Ops loom parses, verifies structurally and prints without modelling their semantics
(infeed/outfeed, send/recv, the legacy cross-replica-sum, batch norm, legacy einsum, quantization,
...), each defined by one `_loose` row. The collectives are modelled in `collectives`."""

from __future__ import annotations

from typing import Any

from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.types import integer_syntax
from loom.ir.opdef import Constraint, Pure, opt_prop, region_def, var_operand, var_result
from loom.ir.types import i64

__all__ = ["AsyncStartOp", "AsyncDoneOp", "BatchNormGradOp", "BatchNormInferenceOp", "BatchNormTrainingOp",
           "CrossReplicaSumOp", "DynamicConvOp", "DynamicGatherOp", "DynamicPadOp", "EinsumOp", "InfeedOp",
           "OutfeedOp", "RealDynamicSliceOp", "RecvOp", "SendOp", "SetDimensionSizeOp", "TorchIndexSelectOp",
           "UnaryEinsumOp", "UniformDequantizeOp", "UniformQuantizeOp"]


# The custom forms of the loose ops MLIR prints in one (the others print in the generic form):
# mnemonic -> (assembly format, result names, i64 properties the format writes bare).
_FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"
_LOOSE_FORMS: dict[str, tuple[str | None, tuple[str, ...], tuple[str, ...]]] = {
    "batch_norm_grad": (None, ("grad_operand", "grad_scale", "grad_offset"), ()),
    "batch_norm_training": (None, ("output", "batch_mean", "batch_var"), ()),
    "dynamic_pad": ("operands " + _FUNCTIONAL, (), ()),
    "einsum": ("operands `,` `config` `=` $einsum_config " + _FUNCTIONAL, (), ()),
    "real_dynamic_slice": ("operands " + _FUNCTIONAL, (), ()),
    "set_dimension_size": ("operands `,` `dim` `=` $dimension " + _FUNCTIONAL, (), ("dimension",)),
    "unary_einsum": ("operands `,` `config` `=` $einsum_config " + _FUNCTIONAL, (), ()),
}


def _loose(mnemonic: str, class_name: str, props: str, doc: str, regions: int = 0, pure: bool = False) -> type:
    """An op loom parses, verifies structurally and prints, without modelling its semantics:
    any operands and results, its properties (all optional, unchecked) and regions. Its custom
    form, where MLIR prints one, is in `_LOOSE_FORMS`."""
    ns: dict[str, Any] = {"__doc__": doc, "__module__": __name__, "__qualname__": class_name,
                          "name": f"stablehlo.{mnemonic}", "operands_": var_operand(), "results_": var_result(),
                          "traits": (Pure,) if pure else ()}
    for p in props.split():
        ns[p] = opt_prop()
    for i in range(regions):
        ns[f"region{i}"] = region_def()
    form, result_names, integer_props = _LOOSE_FORMS.get(mnemonic, (None, (), ()))
    ns["assembly_format"] = form
    for p in integer_props:  # written bare (`dim = 0`) in the custom form
        ns[p] = opt_prop(Constraint(lambda a: True, "attribute", integer_syntax(i64)))
    if result_names:
        ns["asm_result_names"] = lambda self: list(result_names) if len(self.results) == len(result_names) else None
    return type(class_name, (StableHLOOp,), ns)


AsyncStartOp = _loose("async_start", "AsyncStartOp", "", "Starts an asynchronous computation.", regions=1)
AsyncDoneOp = _loose("async_done", "AsyncDoneOp", "", "Waits for an asynchronous computation.")
BatchNormGradOp = _loose("batch_norm_grad", "BatchNormGradOp", "epsilon feature_index",
                         "Gradients of batch normalisation.", pure=True)
BatchNormInferenceOp = _loose("batch_norm_inference", "BatchNormInferenceOp", "epsilon feature_index",
                              "Batch normalisation with given statistics.", pure=True)
BatchNormTrainingOp = _loose("batch_norm_training", "BatchNormTrainingOp", "epsilon feature_index",
                             "Batch normalisation computing the batch statistics.", pure=True)
CrossReplicaSumOp = _loose("cross-replica-sum", "CrossReplicaSumOp", "replica_groups",
                           "Legacy sum across replicas (collective).")
DynamicConvOp = _loose("dynamic_conv", "DynamicConvOp",
                       "window_strides lhs_dilation rhs_dilation window_reversal dimension_numbers "
                       "feature_group_count batch_group_count precision_config",
                       "Convolution with run-time padding.", pure=True)
DynamicGatherOp = _loose("dynamic_gather", "DynamicGatherOp", "dimension_numbers indices_are_sorted",
                         "Gather with run-time slice sizes.", pure=True)
DynamicPadOp = _loose("dynamic_pad", "DynamicPadOp", "", "Pad with run-time paddings.", pure=True)
EinsumOp = _loose("einsum", "EinsumOp", "einsum_config", "Legacy two-operand einsum.", pure=True)
InfeedOp = _loose("infeed", "InfeedOp", "infeed_config layout", "Reads from the infeed.")
OutfeedOp = _loose("outfeed", "OutfeedOp", "outfeed_config", "Writes to the outfeed.")
RealDynamicSliceOp = _loose("real_dynamic_slice", "RealDynamicSliceOp", "", "Slice with run-time bounds.", pure=True)
RecvOp = _loose("recv", "RecvOp", "channel_handle is_host_transfer source_target_pairs", "Receives from a channel.")
SendOp = _loose("send", "SendOp", "channel_handle is_host_transfer source_target_pairs", "Sends to a channel.")
SetDimensionSizeOp = _loose("set_dimension_size", "SetDimensionSizeOp", "dimension",
                            "Sets the run-time size of a bounded dimension.", pure=True)
TorchIndexSelectOp = _loose("torch_index_select", "TorchIndexSelectOp", "dim batch_dims",
                            "Legacy PyTorch-style index_select.", pure=True)
UnaryEinsumOp = _loose("unary_einsum", "UnaryEinsumOp", "einsum_config", "Legacy one-operand einsum.", pure=True)
UniformDequantizeOp = _loose("uniform_dequantize", "UniformDequantizeOp", "",
                             "Converts quantized values to floats.", pure=True)
UniformQuantizeOp = _loose("uniform_quantize", "UniformQuantizeOp", "", "Quantizes values.", pure=True)
