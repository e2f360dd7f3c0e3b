"""StableHLO's canonicalization patterns beyond folding, attached to their ops'
`canonicalization_patterns`, and the helpers that recognise one-op reduction bodies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from loom.dialects.stablehlo.attributes import i64_array
from loom.dialects.stablehlo.constants import ConstantOp
from loom.dialects.stablehlo.contraction import DotGeneralOp
from loom.dialects.stablehlo.elementwise import AddOp
from loom.dialects.stablehlo.folding import splat_value
from loom.dialects.stablehlo.properties import prop_int, prop_ints
from loom.dialects.stablehlo.reduction import ReduceOp
from loom.dialects.stablehlo.shape import ConcatenateOp, PadOp, ReshapeOp, SliceOp, TransposeOp
from loom.ir.attributes import ArrayAttr, Attribute
from loom.ir.core import Operation
from loom.ir.types import RankedTensorType
from loom.rewrite import FunctionPattern

__all__ = ["single_op_body", "reduction_body"]


def single_op_body(region: Any) -> Operation | None:
    """The one op of a reduction body `{ %r = op(%a, %b); return %r }` over its two arguments
    (in either order), else None: how reduce, reduce_window and scatter bodies are recognised."""
    block = region.blocks[0]
    ops = list(block.ops)
    if len(ops) != 2 or len(block.args) != 2:
        return None
    op, ret = ops
    if len(op.results) != 1 or tuple(ret.operands) != (op.results[0],):
        return None
    if len(op.operands) != 2 or set(op.operands) != set(block.args):
        return None
    return op


def reduction_body(op: Operation) -> str | None:
    """The name of the one binary op of a one-input reduction's body (reduce, reduce_window), else
    None."""
    body = single_op_body(op.regions[0]) if len(op.operands) == 2 else None
    return None if body is None else body.name


def _is_identity(body: str, v: Any) -> bool:
    """Whether `v` (a numpy scalar) is the identity of the reduction `body`."""
    dtype = np.asarray(v).dtype
    if body == "stablehlo.add" or body == "stablehlo.or":
        return bool(v == 0)
    if body == "stablehlo.multiply":
        return bool(v == 1)
    if body == "stablehlo.and":
        return bool(v == np.invert(np.zeros((), dtype))) if dtype.kind in "biu" else False
    if body in ("stablehlo.maximum", "stablehlo.minimum"):
        low = body == "stablehlo.maximum"
        if dtype.kind == "f" or dtype.kind == "V":  # bf16 and the small floats are numpy 'V'
            return bool(np.isinf(np.float64(v)) and (np.float64(v) < 0) == low)
        if dtype.kind == "b":
            return bool(v) != low
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return bool(v == (info.min if low else info.max))
    return False


def _reduce_over_unit_dims(op: Operation, rewriter: Any) -> bool:
    """`reduce(x, init)` over dimensions that all have size 1, with a one-op body and `init` that
    op's identity, is `reshape(x)` (XLA's simplifier does the same; a sum then keeps the sign of a
    zero where `0 + -0` would not). JAX emits such reduces in the gradients of broadcasts."""
    if len(op.operands) != 2:
        return False
    x, init = op.operands
    t = x.type
    if not isinstance(t, RankedTensorType) or not t.has_static_shape or \
            any(t.shape[d] != 1 for d in prop_ints(op.properties, "dimensions", ())):
        return False
    body = reduction_body(op)
    owner = init.owner_op
    if body is None or not isinstance(owner, ConstantOp):
        return False
    v = splat_value(owner.read_properties().get("value"))
    if v is None or not _is_identity(body, v):
        return False
    rewriter.set_insertion_point_before(op)
    rewriter.replace_op(op, ReshapeOp.insert(rewriter, [x], result_types=[op.results[0].type], location=op.location))
    return True


def _transpose_of_matmul(op: Operation, rewriter: Any) -> bool:
    """`transpose(dot_general(a, b), [1, 0])` of a plain matrix product (no batching) used only
    there is `dot_general(b, a)` with the contracting dimensions swapped: one product, no
    transpose. JAX emits it in the gradients of `x @ w`."""
    dot = op.operands[0].owner_op
    if list(prop_ints(op.properties, "permutation", ())) != [1, 0] or not isinstance(dot, DotGeneralOp) or \
            len(dot.results[0].uses) != 1 or "algorithm" in dot.properties:
        return False
    dn = dot.properties["dot_dimension_numbers"]
    lhs, rhs = dot.operands
    if dn.lhs_batching_dimensions or dn.rhs_batching_dimensions or \
            not all(isinstance(v.type, RankedTensorType) and v.type.rank == 2 for v in (lhs, rhs)):
        return False
    props: dict[str, Attribute] = {"dot_dimension_numbers": dn.replace(
        lhs_contracting_dimensions=dn.rhs_contracting_dimensions,
        rhs_contracting_dimensions=dn.lhs_contracting_dimensions)}
    precision = dot.read_properties().get("precision_config")
    if precision is not None:
        props["precision_config"] = ArrayAttr(tuple(reversed(precision.elements)))
    rewriter.set_insertion_point_before(op)
    rewriter.replace_op(op, DotGeneralOp.insert(rewriter, [rhs, lhs], props, [op.results[0].type],
                                                location=op.location))
    return True


def _zero_padded(v: Any) -> tuple[Any, Any, list[int], list[int]] | None:
    """(operand, padding value, low, high) of `v` made by a pad used once, with no interior or
    negative padding and a constant zero as its padding value; else None."""
    pad = v.owner_op
    if not isinstance(pad, PadOp) or len(v.uses) != 1:
        return None
    low, high = (list(prop_ints(pad.properties, n, ())) for n in ("edge_padding_low", "edge_padding_high"))
    if any(prop_ints(pad.properties, "interior_padding", ())) or min(low + high, default=0) < 0:
        return None
    x, value = pad.operands
    owner = value.owner_op
    zero = splat_value(owner.read_properties().get("value")) if isinstance(owner, ConstantOp) else None
    if zero is None or zero != 0 or not isinstance(x.type, RankedTensorType) or not x.type.has_static_shape:
        return None
    return x, value, low, high


def _add_of_adjacent_pads(op: Operation, rewriter: Any) -> bool:
    """`add(pad(a, 0), pad(b, 0))` where the two pads differ along one dimension only, and there
    `a` ends where `b` begins, is `pad(concatenate(a, b), 0)`: each element is one operand's or
    zero (x + 0 is x; XLA's simplifier takes the same, and so drops the sign of a -0). The gradient
    of a split (slices, each transposed to a pad) sums such pads, one full-size array per piece,
    each added next to the last; repeated, this makes one concatenation of the pieces. (Pieces
    added out of order, with a gap between them, stay as they are.)"""
    lhs, rhs = (_zero_padded(v) for v in op.operands)
    if lhs is None or rhs is None or lhs[0].type.element_type != rhs[0].type.element_type:
        return False
    differ = [d for d in range(len(lhs[2])) if (lhs[2][d], lhs[3][d]) != (rhs[2][d], rhs[3][d])]
    if len(differ) != 1:
        return False
    d = differ[0]
    first, second = (lhs, rhs) if lhs[2][d] <= rhs[2][d] else (rhs, lhs)
    if first[2][d] + first[0].type.shape[d] != second[2][d]:  # not adjacent
        return False
    low = list(first[2])
    high = list(first[3])
    high[d] = second[3][d]
    rewriter.set_insertion_point_before(op)
    joined = ConcatenateOp.build(rewriter, [first[0], second[0]], d, location=op.location).results[0]
    props = {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
             "interior_padding": i64_array([0] * len(low))}
    rewriter.replace_op(op, PadOp.insert(rewriter, [joined, first[1]], props, [op.results[0].type],
                                         location=op.location))
    return True


def _concatenate_of_concatenates(op: Operation, rewriter: Any) -> bool:
    """An input of a concatenate that is a concatenate along the same dimension, used only there,
    gives its inputs in its place: one copy of each piece instead of two."""
    d = prop_int(op.properties, "dimension")
    inputs, nested = [], False
    for v in op.operands:
        inner = v.owner_op
        if isinstance(inner, ConcatenateOp) and len(v.uses) == 1 and prop_int(inner.properties, "dimension") == d:
            inputs.extend(inner.operands)
            nested = True
        else:
            inputs.append(v)
    if not nested:
        return False
    rewriter.set_insertion_point_before(op)
    rewriter.replace_op(op, ConcatenateOp.insert(rewriter, inputs, dict(op.properties), [op.results[0].type],
                                                 location=op.location))
    return True


def _slice_of_dot(op: Operation, rewriter: Any) -> bool:
    """`slice(dot_general(a, b))`, the product used only there, is `dot_general(slice(a),
    slice(b))`: a batching dimension of the result slices both operands, a free one the operand it
    comes from, and the contracting dimensions stay whole, so each element kept is the same sum
    over the same products and nothing else is computed. The gradient of `concatenate([x, h]) @ w`
    with respect to h alone (an LSTM cell whose input x is data) is such a slice: the cotangent of
    the whole concatenation, then h's part of it."""
    dot = op.operands[0].owner_op
    if not isinstance(dot, DotGeneralOp) or len(dot.results[0].uses) != 1:
        return False
    lhs, rhs = dot.operands
    if not all(isinstance(v.type, RankedTensorType) and v.type.has_static_shape for v in (lhs, rhs)):
        return False
    dn = dot.properties["dot_dimension_numbers"]
    lb, rb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    lfree = [d for d in range(lhs.type.rank) if d not in lb and d not in dn.lhs_contracting_dimensions]
    rfree = [d for d in range(rhs.type.rank) if d not in rb and d not in dn.rhs_contracting_dimensions]
    ranges = [[(0, n, 1) for n in v.type.shape] for v in (lhs, rhs)]
    for r, cut in enumerate(zip(*(prop_ints(op.properties, n) for n in ("start_indices", "limit_indices",
                                                                          "strides")))):
        if r < len(lb):  # result dimensions: batching, then lhs's free ones, then rhs's
            ranges[0][lb[r]] = ranges[1][rb[r]] = cut
        elif r < len(lb) + len(lfree):
            ranges[0][lfree[r - len(lb)]] = cut
        else:
            ranges[1][rfree[r - len(lb) - len(lfree)]] = cut
    whole = [all(c == (0, n, 1) for c, n in zip(rs, v.type.shape)) for rs, v in zip(ranges, (lhs, rhs))]
    if all(whole):  # the identity slice: its fold's business
        return False
    rewriter.set_insertion_point_before(op)
    operands = [v if keep else SliceOp.build(rewriter, v, *zip(*rs), location=op.location).results[0]
                for v, rs, keep in zip((lhs, rhs), ranges, whole)]
    product = DotGeneralOp.create(operands, dict(dot.read_properties()), [op.results[0].type],
                                  attributes=dict(dot.read_attributes()), location=dot.location)
    rewriter.insert(product)
    rewriter.replace_op(op, product)
    return True


def _patterns(fn: Callable) -> classmethod:
    def canonicalization_patterns(cls: type) -> list:
        return [FunctionPattern(fn, cls.name)]
    return classmethod(canonicalization_patterns)


ReduceOp.canonicalization_patterns = _patterns(_reduce_over_unit_dims)
TransposeOp.canonicalization_patterns = _patterns(_transpose_of_matmul)
AddOp.canonicalization_patterns = _patterns(_add_of_adjacent_pads)
ConcatenateOp.canonicalization_patterns = _patterns(_concatenate_of_concatenates)
SliceOp.canonicalization_patterns = _patterns(_slice_of_dot)
